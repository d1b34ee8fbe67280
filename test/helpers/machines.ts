import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execMachine, initWorkspace, killMachine, listMachines } from '../../src/index.js'
import { tempDir } from './tmp.js'

/**
 * One kernel and Debian package cache for every machine test (and the unprivileged one, hence world-writable):
 * the Debian kernel is fetched with `apt-get download` into `$XDG_CACHE_HOME/forkpoint/kernels`
 * once, not once a test. Set on import, before any machine is built.
 */
export const KERNEL_CACHE = join(tmpdir(), 'forkpoint-test-kernels')
for (const dir of [KERNEL_CACHE, join(KERNEL_CACHE, 'forkpoint'), join(KERNEL_CACHE, 'forkpoint', 'kernels'), join(KERNEL_CACHE, 'forkpoint', 'debs')]) {
  mkdirSync(dir, { recursive: true })
  try {
    chmodSync(dir, 0o1777)
  } catch {
    // made by another user: theirs to open up
  }
}
process.env['XDG_CACHE_HOME'] = KERNEL_CACHE

/** A machine test's timeout: boots under TCG on a busy two-core host. */
export const MACHINE_TIMEOUT = 240_000

/** A fresh workspace with a store. */
export async function machineWorkspace(label = 'machine'): Promise<string> {
  const dir = tempDir(label)
  await initWorkspace({ dir })
  return dir
}

export { pollFor } from './until.js'

/**
 * Settle `p`, or report that it never settled: a call that hangs is a failure to show, not a
 * test to time out with nothing said. The deadline is generous; it bounds a hang, not speed.
 */
export async function settlesWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms / 1000} s`)), ms)))
  try {
    return await Promise.race([p, hang])
  } finally {
    clearTimeout(timer)
  }
}

/** Whether a process is alive: its /proc entry exists and it is no zombie (nothing reaps them on this host). */
export function processAlive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

/** Live QEMU processes whose command line names `needle` (a store's path, a machine's socket). */
export function qemuProcessesNaming(needle: string): number[] {
  return processesNaming(needle, (cmdline) => cmdline.startsWith('qemu-system'))
}

/** Live `unshare`s that start a QEMU naming `needle` in namespaces of its own: each goes when its QEMU does. */
export function qemuLaunchersNaming(needle: string): number[] {
  return processesNaming(needle, (cmdline) => cmdline.startsWith('unshare\0') && cmdline.includes('\0qemu-system'))
}

function processesNaming(needle: string, kind: (cmdline: string) => boolean): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8')
      if (kind(cmdline) && cmdline.includes(needle) && processAlive(Number(name))) pids.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

/** Kill every machine of a workspace's store (afterAll), whatever state it is in. */
export async function killAllMachines(dir: string): Promise<void> {
  if (!existsSync(join(dir, '.forkpoint'))) return
  for (const m of await listMachines({ dir }).catch(() => [])) await killMachine({ dir, machine: m.id }).catch(() => undefined)
}

/** `sh -c` words for the guest: single-quoted. */
export const shq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

/**
 * A guest command that leaves a value in the memory of a background process alone: the value
 * is read from /tmp (tmpfs) into a shell variable, the file removed, and the process writes it
 * to /tmp/heartbeat every second. The daemon closes every descriptor it inherited from the
 * agent: 0-2 and, as a workaround for the agent leaking its port (see agent.test.ts), fd 3.
 */
export function heartbeatDaemon(secret: string): string {
  return [
    `printf %s ${shq(secret)} > /tmp/secret`,
    `setsid sh -c 'V=$(cat /tmp/secret); rm /tmp/secret; while :; do echo "$V" > /tmp/heartbeat; sleep 1; done' </dev/null >/dev/null 2>&1 3<&- &`,
  ].join('\n')
}

/** How long an exec may go unanswered before a test says so: a hang, never a bound on speed. */
export const EXEC_HANG_MS = 120_000

/** `execMachine`, failing with a clear message if the guest never answers (a wedged agent, see test/machine/agent.test.ts). */
export function execOrHang(o: Parameters<typeof execMachine>[0]): ReturnType<typeof execMachine> {
  return settlesWithin(execMachine(o), EXEC_HANG_MS, `exec ${JSON.stringify(o.command.slice(0, 60))} in machine ${o.machine}`)
}
