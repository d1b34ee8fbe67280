import { promises as fs } from 'node:fs'
import { type RunCgroup, makeRunCgroup, removeCgroup } from '../../sandbox/cgroup.js'

/** What QEMU itself may use beside the guest's RAM: its code, the TCG translation buffer (about 18 MB seen here), device buffers. */
const QEMU_OWN_MIB = 256
/** QEMU's threads: main, vCPU, RCU, and a block I/O pool of up to 64 workers. */
const MACHINE_PIDS = 256

/**
 * Put a machine's QEMU in a memory cgroup (its guest's RAM and QEMU's own) and a pids
 * cgroup, where this host lets us make them (the sandbox's rule: cgroup v2 delegated to
 * us, or a writable v1 hierarchy). The folders, for `releaseLimits` once QEMU is gone;
 * none where no cgroup can be made (an unprivileged caller without delegation).
 */
export async function limitMachine(pid: number, memoryMiB: number): Promise<string[]> {
  const groups = (await Promise.all([makeRunCgroup('memory', (memoryMiB + QEMU_OWN_MIB) * 2 ** 20), makeRunCgroup('pids', MACHINE_PIDS)])).filter((g): g is RunCgroup => g !== null)
  for (const group of groups) await fs.writeFile(group.procs, String(pid))
  return groups.map((g) => g.dir)
}

export async function releaseLimits(dirs: readonly string[]): Promise<void> {
  for (const dir of dirs) await removeCgroup(dir)
}
