import { type ChildProcess, fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Misbehaviour } from './oracle.js'
import type { Verdict } from './targetMain.js'

const SCRIPT = fileURLToPath(new URL('./targetMain.ts', import.meta.url))
const RSS_POLL_MS = 100

export interface Judged {
  misbehaviour: Misbehaviour | null
  accepted: boolean
}

export interface Watchdog {
  /** Wall-clock time one input may take before it counts as a hang. */
  timeoutMs: number
  /** Resident memory the target process may reach. */
  maxRssBytes: number
}

/**
 * A target's process (targetMain.ts), started on first use and again after it is
 * killed or dies. Each input runs under a watchdog: past `timeoutMs`, or past
 * `maxRssBytes` resident (read from /proc while it runs, so a bomb is stopped before it
 * takes the machine), the process is killed and the input is a finding.
 */
export class TargetProcess {
  private child: ChildProcess | null = null
  private stderr = ''

  constructor(
    private readonly module: string,
    private readonly target: string,
    private readonly context: Record<string, string>,
    private readonly watchdog: Watchdog,
  ) {}

  /** The input's misbehaviour (null for none), and whether the target took it without an error. */
  async judge(input: Buffer): Promise<Judged> {
    const child = this.child ?? (await this.start())
    return new Promise((resolve) => {
      const finish = (misbehaviour: Misbehaviour | null, kill: boolean, accepted = false) => {
        clearTimeout(timer)
        clearInterval(poll)
        child.off('message', onMessage)
        child.off('exit', onExit)
        if (kill) this.stop()
        resolve({ misbehaviour, accepted })
      }
      const onMessage = (verdict: Verdict) => {
        if (verdict.peakRssBytes > this.watchdog.maxRssBytes) finish({ kind: 'rss', detail: `peak RSS ${verdict.peakRssBytes} bytes` }, true)
        else finish(verdict.misbehaviour, false, verdict.accepted)
      }
      const onExit = (code: number | null, signal: string | null) => {
        this.child = null
        finish({ kind: 'crash', detail: `the target process exited (${signal ?? code}): ${this.stderr.slice(-2000)}` }, false)
      }
      const timer = setTimeout(() => finish({ kind: 'hang', detail: `no answer in ${this.watchdog.timeoutMs} ms` }, true), this.watchdog.timeoutMs)
      const poll = setInterval(() => {
        const rss = residentBytes(child.pid!)
        if (rss > this.watchdog.maxRssBytes) finish({ kind: 'rss', detail: `RSS ${rss} bytes while running` }, true)
      }, RSS_POLL_MS)
      child.on('message', onMessage)
      child.on('exit', onExit)
      child.send(input)
    })
  }

  stop(): void {
    this.child?.kill('SIGKILL')
    this.child = null
  }

  private async start(): Promise<ChildProcess> {
    this.stderr = ''
    const child = fork(SCRIPT, [this.module, this.target, JSON.stringify(this.context)], {
      execArgv: ['--import', 'tsx'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    })
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-8000)))
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve())
      child.once('exit', (code) => reject(new Error(`fuzz target ${this.target} did not start (exit ${code}): ${this.stderr}`)))
    })
    child.removeAllListeners('exit')
    this.child = child
    return child
  }
}

/** A process's resident set from /proc (0 once it is gone). */
function residentBytes(pid: number): number {
  try {
    const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1])
    return pages * 4096
  } catch {
    return 0
  }
}
