/**
 * vitest globalSetup of the integration project (vitest.config.ts): a folder of the run's own
 * where test/helpers/sharedMachineImages.ts builds each machine image that test files share,
 * once a run, removed after it.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    machineImages: string
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'shared-machine-images-'))
  project.provide('machineImages', dir)
  return () => rmSync(dir, { recursive: true, force: true })
}
