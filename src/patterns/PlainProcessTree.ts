import { randomBytes } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'

/** The variable that marks every process of one plain run, inherited by all it starts. */
const COOKIE = 'FORKPOINT_PLAIN_RUN'

/**
 * The processes of one plain (unsandboxed) run: its process group, and whatever left the
 * group (`setsid`, a daemon's double fork) but still carries the run's cookie in its
 * environment, as Jenkins' ProcessTreeKiller finds a build's daemons. A sandboxed run needs
 * none of this: its PID namespace ends with its first process.
 */
export class PlainProcessTree {
  readonly #cookie = `${COOKIE}=${randomBytes(12).toString('hex')}`
  #leader: number | undefined
  #ended = false

  /** The environment to start the run's first process with. */
  environment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return { ...env, [COOKIE]: this.#cookie.slice(COOKIE.length + 1) }
  }

  /** The run's first process, leader of its own process group. */
  started(pid: number | undefined): void {
    this.#leader = pid
  }

  /** Kill the run's processes; how many were found (one scan of /proc). */
  kill(): number {
    if (this.#leader !== undefined) signal(-this.#leader)
    const members = this.members()
    for (const pid of members) signal(pid)
    return members.length
  }

  /**
   * Kill every process of the run and wait until a scan finds none left (zombies aside: they
   * run nothing). Once that is so, later calls have nothing to do.
   */
  async end(): Promise<void> {
    if (this.#ended) return
    while (this.kill() > 0) await new Promise((r) => setTimeout(r, 10))
    this.#ended = true
  }

  /** Live processes of the run, found in /proc. */
  members(): number[] {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
      .filter((name) => this.#holds(name))
      .map(Number)
  }

  #holds(pid: string): boolean {
    const stat = readOr(`/proc/${pid}/stat`)
    // after the command name, which may hold spaces and parentheses: state, ppid, pgrp
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (stat === '' || state === 'Z' || state === 'X') return false
    return Number(pgrp) === this.#leader || readOr(`/proc/${pid}/environ`).split('\0').includes(this.#cookie)
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone already
  }
}

/** A /proc file, or '' for a process that is gone or not ours to read. */
function readOr(path: string): string {
  try {
    return readFileSync(path, 'latin1')
  } catch {
    return ''
  }
}
