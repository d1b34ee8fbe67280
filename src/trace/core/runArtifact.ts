import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { atomicWrite } from '../../util/atomicWrite.js'
import { canonicalJson } from '../../util/canonicalJson.js'
import type { Run } from '../../objects/Run.js'

/**
 * The text of a `*.run.json` file: keys in canonical order, two-space indented, one
 * trailing newline, so the same run always writes the same bytes and diffs well in git.
 */
export function runArtifactText(run: Run): string {
  return `${JSON.stringify(JSON.parse(canonicalJson(run)), null, 2)}\n`
}

/** Write `run` as an artifact at `path`, making its directory when it is not there yet. */
export async function writeRunArtifact(path: string, run: Run): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  await atomicWrite(path, runArtifactText(run))
}
