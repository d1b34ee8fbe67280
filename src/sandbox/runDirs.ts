import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isAlive, self } from './processId.js'

const PREFIX = 'forkpoint-run-'

/**
 * A private directory for one sandboxed run's stdio files, named for the process that
 * made it (pid and start time), so that `removeOrphanRunDirs` can tell the leftovers of
 * a process that was killed mid-run from the directories of live ones.
 */
export function makeRunDir(): string {
  return mkdtempSync(join(tmpdir(), `${PREFIX}${self.pid}-${self.start}-`))
}

/** Remove run directories of ours whose process is gone. */
export function removeOrphanRunDirs(): void {
  const uid = process.getuid?.()
  for (const name of readdirSync(tmpdir())) {
    const owner = /^forkpoint-run-(\d+)-(\d+)-/.exec(name)
    if (!owner || isAlive({ pid: Number(owner[1]), start: owner[2]! })) continue
    const path = join(tmpdir(), name)
    try {
      if (statSync(path).uid === uid) rmSync(path, { recursive: true, force: true })
    } catch {
      // gone already, or not ours to remove
    }
  }
}
