import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { AcceleratorFailedError, GuestStoppedError, MachineError } from '../../errors/index.js'
import type { GuestStopData } from '../../errors/machineErrors.js'
import { hasExited } from '../machineRecords.js'
import type { Accelerator } from '../../objects/MachineLayer.js'
import { QmpClient } from './QmpClient.js'

/** What the watchdog watches: a machine's QEMU, its QMP socket, and the logs it names in a report. */
export interface Watched {
  machine: string
  pid: number
  qmp: string
  log: string
  console: string
  accelerator: Accelerator
}

/** QMP run states from which a guest never answers again by itself. */
const STOPPED = new Set(['internal-error', 'guest-panicked', 'shutdown', 'io-error'])

/** How often the watchdog asks: a stopped guest is reported within about this, and each ask is one short QMP connection. */
const WATCH_INTERVAL_MS = 500

/**
 * Wait for `work` (a boot's hello, a command's answer) unless the guest cannot give it:
 * QEMU exited, or its run state says the guest stopped (KVM's internal error, a panic,
 * a power-off), or — with `bound` — nothing came within `bound.ms`. Each check is a short
 * QMP connection, so the watchdog never holds QMP from a snapshot for long.
 */
export async function watched<T>(w: Watched, work: Promise<T>, bound?: { ms: number; what: string }): Promise<T> {
  let done = false
  const watch = (async (): Promise<never> => {
    const started = Date.now()
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, WATCH_INTERVAL_MS))
      if (done) return new Promise<never>(() => undefined)
      if (hasExited(w.pid)) throw stopped(w, 'exited')
      const status = await runState(w)
      if (status !== null && STOPPED.has(status)) throw stopped(w, status)
      if (bound && Date.now() - started > bound.ms) throw stopped(w, 'no-answer', bound.what)
    }
  })()
  try {
    return await Promise.race([work.catch((err: unknown) => whyFailed(w, err)), watch])
  } finally {
    done = true
    watch.catch(() => undefined)
  }
}

/** A failed wait on a guest that stopped (its agent's socket closes as QEMU exits) is reported as the stop, not as the closed socket. */
async function whyFailed(w: Watched, err: unknown): Promise<never> {
  const status = await settledState(w)
  throw status !== null && (status === 'exited' || STOPPED.has(status)) ? stopped(w, status) : err
}

/**
 * QEMU's run state, or 'exited'. A QEMU on its way out has closed its sockets before it is
 * gone, and answers neither QMP nor the exit check for that moment: it is asked again
 * until one answers, for at most SETTLE_MS (null then: the error stands as it came).
 */
async function settledState(w: Watched): Promise<string | null> {
  const end = Date.now() + SETTLE_MS
  for (;;) {
    if (hasExited(w.pid)) return 'exited'
    const status = await runState(w)
    if (status !== null || Date.now() > end) return status
    await new Promise((resolve) => setTimeout(resolve, WATCH_INTERVAL_MS / 10))
  }
}

const SETTLE_MS = 10_000

async function runState(w: Watched): Promise<string | null> {
  try {
    const qmp = await QmpClient.connect(w.qmp, w.machine)
    try {
      return (await qmp.execute<{ status: string }>('query-status')).status
    } finally {
      qmp.close()
    }
  } catch {
    return null // QEMU is going: the exit check says so next time
  }
}

/** The error for a guest that stopped: the accelerator's fault where the state or QEMU's log says KVM failed (its words, or an assertion in its kvm code: `kvm_buf_set_msrs` on a nested KVM). */
export function stopped(
  w: Pick<Watched, 'machine' | 'log' | 'console' | 'accelerator'>,
  status: string,
  waitedFor?: string,
): MachineError | AcceleratorFailedError | GuestStoppedError {
  const data: GuestStopData = { machine: w.machine, status, qemuLog: qemuReason(w.log), console: consoleExcerpt(w.console) }
  const said = [data.qemuLog && `QEMU said: ${data.qemuLog}`, data.console && `the console:\n${data.console}`].filter(Boolean).join('\n')
  const kvmFailed = w.accelerator === 'kvm' && (status === 'internal-error' || status === 'no-answer' || /KVM|\bkvm[_./]/.test(data.qemuLog))
  if (kvmFailed)
    return new AcceleratorFailedError(`machine ${w.machine}: KVM cannot run this guest (${stopReason(data, waitedFor)}); run it with --accel tcg (FORKPOINT_ACCEL=tcg)\n${said}`, {
      ...data,
      accelerator: w.accelerator,
    })
  if (status === 'no-answer') return new MachineError(`machine ${w.machine}: ${waitedFor ?? 'the guest'} did not come in time\n${said}`, { machine: w.machine })
  return new GuestStoppedError(`machine ${w.machine}: the guest stopped (${status === 'exited' ? 'QEMU exited' : status})\n${said}`, data)
}

/** A stop in a few words: what the watchdog saw, and QEMU's first words about it. */
export function stopReason(d: Pick<GuestStopData, 'status' | 'qemuLog'>, waitedFor?: string): string {
  const seen = d.status === 'no-answer' ? `no answer: ${waitedFor ?? "the guest's agent"} did not come` : d.status === 'exited' ? 'QEMU exited' : `QEMU's state ${d.status}`
  return d.qemuLog ? `${seen}; QEMU said: ${d.qemuLog}` : seen
}

/** QEMU's own words from its log: its messages without the register dump that follows a KVM error. */
function qemuReason(log: string): string {
  const lines = readTail(log)
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^(extra data|[A-Z0-9]{2,3}\s*=|RIP=|RFL=|Code=|[A-Z]DT=|EFER=|DR[0-9]|CR[0-9])/.test(l.trim()))
  return lines.slice(0, 4).join('; ')
}

/** What the kernel says of a crash, found by its words, then the console's last lines. */
const CRASH_LINE = /Kernel panic|BUG:|Oops|general protection fault|forkpoint:/

/** A crash's own lines (a panic's reason comes before its stack dump), then the last lines of the console. */
function consoleExcerpt(file: string): string {
  const lines = readTail(file).trimEnd().split('\n')
  const last = lines.slice(-6)
  const crash = lines
    .slice(0, -6)
    .filter((l) => CRASH_LINE.test(l))
    .slice(0, 4)
  return [...crash, ...(crash.length > 0 ? ['…'] : []), ...last].join('\n')
}

/** The last 16 KiB of a log: a guest writes its console without bound. */
function readTail(file: string): string {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return ''
  }
  try {
    const size = fstatSync(fd).size
    const tail = Buffer.alloc(Math.min(size, 16384))
    const read = readSync(fd, tail, 0, tail.length, size - tail.length)
    return tail.subarray(0, read).toString('utf8')
  } finally {
    closeSync(fd)
  }
}
