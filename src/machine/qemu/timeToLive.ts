import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { MachineError, UsageError } from '../../errors/index.js'
import { parseDuration } from '../../sandbox/limits.js'
import type { MachineTtl } from '../MachineBackend.js'

/** The longest time to live: a year, so `sleep` is given a number it reads. */
const MAX_TTL_SECONDS = 366 * 24 * 3600

/** A machine's time to live in whole seconds (at least one), checked before anything starts; null for none. */
export function ttlSeconds(ttl: MachineTtl | undefined): number | null {
  if (ttl === undefined) return null
  const seconds = Math.ceil(parseDuration(ttl, 'ttl') / 1000)
  if (seconds > MAX_TTL_SECONDS)
    throw new UsageError(`a machine's ttl is at most ${MAX_TTL_SECONDS / 86400} days, not ${JSON.stringify(ttl)}`, { option: 'ttl', value: String(ttl) })
  return seconds
}

/**
 * The script of a QEMU launcher's shell (PID 1 of QEMU's PID namespace): start QEMU, wait
 * for it and exit with its status. With a time to live, SIGUSR1 (sent once the machine's
 * start completes, `startClock`) starts a `sleep` that then kills QEMU: the count runs in
 * the machine's own namespace and needs no forkpoint process alive when it ends, and a
 * slow boot does not eat into it. A `wait` the signal interrupts is waited again.
 */
export function launcherScript(seconds: number | null): string {
  if (seconds === null) return '"$@" & wait $!'
  return `"$@" & q=$!; trap '{ sleep ${seconds}; kill -9 $q; } &' USR1; while :; do wait $q; s=$?; kill -0 $q 2>/dev/null || exit $s; done`
}

/** Start a machine's time to live: signal its launcher's shell (`launcherScript`); when it ends (ISO 8601). */
export function startClock(launcher: ChildProcess, seconds: number, machine: string): string {
  const shell = launcherShell(launcher.pid)
  if (!Number.isSafeInteger(shell) || shell <= 0) throw new MachineError(`machine ${machine}: its launcher's shell is gone: its time to live cannot start`, { machine })
  process.kill(shell, 'SIGUSR1')
  return new Date(Date.now() + seconds * 1000).toISOString()
}

/** `unshare --fork`'s one child, the shell; a machine with a network has the host side of it (`netHost.ts`) above its `unshare`. */
function launcherShell(pid: number | undefined): number {
  const first = firstChild(pid)
  return commandOf(first) === 'unshare' ? firstChild(first) : first
}

const firstChild = (pid: number | undefined) => Number(readChildren(pid).trim().split(/\s+/)[0])

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return ''
  }
}

function readChildren(pid: number | undefined): string {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
  } catch {
    return ''
  }
}
