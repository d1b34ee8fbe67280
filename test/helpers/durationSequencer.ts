import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

const ROOT = new URL('../..', import.meta.url).pathname

/** Seconds each file of 10 s or more took in a full run (`npm run test:durations` writes them). */
const DURATIONS = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8')) as Record<string, number>

/**
 * Longest files first, so that none starts near the end and keeps the run going alone: a clean
 * checkout has no vitest cache of durations, and the default order (by file size) started the
 * slowest files last. Files not listed keep vitest's order after the listed ones.
 */
export class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (file: TestSpecification) => DURATIONS[relative(ROOT, file.moduleId)] ?? 0
    return [...(await super.sort(files))].sort((a, b) => seconds(b) - seconds(a))
  }
}
