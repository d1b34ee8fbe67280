import { promises as fs } from 'node:fs'
import { type RunCgroup, makeRunCgroup, removeCgroup } from '../../sandbox/cgroup.js'

/** What QEMU itself may use beside the guest's RAM: its code, the TCG translation buffer (about 18 MB seen here), device buffers. */
const QEMU_OWN_MIB = 256
/** QEMU's threads: main, vCPU, RCU, and a block I/O pool of up to 64 workers. */
const MACHINE_PIDS = 256

/**
 * Make a machine's cgroups while `step` runs (making them took 15-20 ms of a fork's 240
 * here): a memory cgroup (its guest's RAM and QEMU's own) and a pids cgroup, where this
 * host lets us make them (the sandbox's rule: cgroup v2 delegated to us, or a writable v1
 * hierarchy); none where no cgroup can be made (an unprivileged caller without
 * delegation). If `step` fails, what was made is removed.
 */
export async function limitsAlongside<T>(memoryMiB: number, step: Promise<T>): Promise<[T, RunCgroup[]]> {
  const made = Promise.all([makeRunCgroup('memory', (memoryMiB + QEMU_OWN_MIB) * 2 ** 20), makeRunCgroup('pids', MACHINE_PIDS)]).then((groups) =>
    groups.filter((g): g is RunCgroup => g !== null),
  )
  const [done, groups] = await Promise.allSettled([step, made])
  if (done.status === 'fulfilled' && groups.status === 'fulfilled') return [done.value, groups.value]
  if (groups.status === 'fulfilled') await releaseLimits(groups.value.map((g) => g.dir))
  throw done.status === 'rejected' ? done.reason : (groups as PromiseRejectedResult).reason
}

/** Move a machine's QEMU into its cgroups. */
export async function enterLimits(groups: readonly RunCgroup[], pid: number): Promise<void> {
  for (const group of groups) await fs.writeFile(group.procs, String(pid))
}

export async function releaseLimits(dirs: readonly string[]): Promise<void> {
  for (const dir of dirs) await removeCgroup(dir)
}
