import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Store } from '../store/Store.js'
import { MACHINE_ID, killAndWait, machinesDir, qemuProcesses } from './machineRecords.js'

/**
 * Kill the QEMUs running a machine of this store that has no record (its folder was
 * removed by hand, or never got one from an older forkpoint), and remove machine folders
 * that hold no record. A machine's QEMU is known by its disk's path on its command line.
 */
export async function reapOrphans(store: Store): Promise<number[]> {
  const dir = machinesDir(store)
  const owned = (id: string) => existsSync(join(dir, id, 'machine.json'))
  const orphans = qemuProcesses(
    (cmdline) => {
      const id = new RegExp(`${escape(dir)}/(m[0-9a-f]{8})/`).exec(cmdline)?.[1]
      return id !== undefined && !owned(id)
    },
    { launchers: true },
  )
  await killAndWait(orphans)
  if (existsSync(dir)) for (const name of readdirSync(dir)) if (MACHINE_ID.test(name) && !owned(name)) rmSync(join(dir, name), { recursive: true, force: true })
  return orphans
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
