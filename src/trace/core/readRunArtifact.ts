import { readFileSync } from 'node:fs'
import { RunNotFoundError } from '../../errors/index.js'
import { parseRun, parseRunJson } from './parseRun.js'
import type { Run } from './Run.js'

/**
 * A `*.run.json` file, checked as every command that reads one checks it: JSON within
 * the depth limit, the run schema, and each plain step's hashes against its payloads
 * (a hand-edited artifact is RunArtifactError, exit 5). `rehash` is for `ci normalize`
 * alone, which exists to rewrite the hashes of an edited artifact.
 */
export function readRunArtifact(path: string, { rehash = false }: { rehash?: boolean } = {}): { run: Run; writtenVersion: unknown } {
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch {
    throw new RunNotFoundError(`no run artifact at ${path}`, { path })
  }
  const raw = parseRunJson(bytes, path)
  const writtenVersion = (raw as { schemaVersion?: unknown } | null)?.schemaVersion
  return { run: parseRun(raw, path, { verifyHashes: !rehash, owned: true }), writtenVersion }
}
