import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { readlink } from 'node:fs/promises'
import { basename } from 'node:path'
import { SandboxError } from '../errors/index.js'
import { type Fields, encodeMessage, messageReader } from './messages.js'
import { type ProcessId, isAlive, processId } from './processId.js'
import { runtimeBinary } from './runtimeBinary.js'
import { readStateTextOrNull } from '../store/readStateFile.js'

/** Root needs no user namespace to mount. */
export const privileged = process.getuid?.() === 0

type Answer = Record<string, string>

const HOLDER_EXITED = 'the namespace holder exited'

/**
 * A namespace holder: `forkpoint-sandbox holder` (native/sandbox.c) holds a mount namespace
 * (in a user namespace mapping us to its root, unless we are root) in which it mounts and
 * unmounts overlays on request, one message each on its stdin, each answered `event=ok` or
 * `event=error` on its stdout. A mount is a message on a pipe, not a process spawned by Node.
 */
class Holder {
  readonly id: ProcessId
  readonly #child: ChildProcess
  readonly #waiting = new Map<string, (answer: Answer) => void>()
  #nextId = 0
  #closed = false

  constructor(child: ChildProcess) {
    this.#child = child
    this.id = processId(child.pid!)
    child.stdout!.on(
      'data',
      messageReader((answer) => this.#answer(answer)),
    )
    // A request written as it dies fails with EPIPE here; its answer is the 'close' below.
    child.stdin!.on('error', () => undefined)
    // After 'close', not 'exit': the answers it wrote before dying are read by then.
    child.once('close', () => {
      this.#closed = true
      for (const settle of this.#waiting.values()) settle({ event: 'error', message: HOLDER_EXITED })
      this.#waiting.clear()
    })
    this.#ref(false)
  }

  /** Mount (`m`: options, target) or unmount (`u`: target); throws SandboxError with the holder's reason. */
  async request(op: 'm' | 'u', ...args: string[]): Promise<void> {
    const fields: Fields =
      op === 'm'
        ? [
            ['op', 'mount'],
            ['options', args[0]!],
            ['target', args[1]!],
          ]
        : [
            ['op', 'unmount'],
            ['target', args[0]!],
          ]
    const answer = await this.send(fields)
    if (answer['event'] !== 'ok') throw new SandboxError(`${op === 'm' ? 'mount' : 'unmount'} failed: ${answer['message'] ?? 'no answer'}`, { args })
  }

  send(fields: Fields): Promise<Answer> {
    if (this.#closed) return Promise.resolve({ event: 'error', message: HOLDER_EXITED })
    const id = String(this.#nextId++)
    this.#ref(true)
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve)
      this.#child.stdin!.write(encodeMessage([['id', id], ...fields]))
    })
  }

  #answer(answer: Answer): void {
    const settle = this.#waiting.get(answer['id'] ?? '')
    this.#waiting.delete(answer['id'] ?? '')
    settle?.(answer)
    if (this.#waiting.size === 0) this.#ref(false)
  }

  /** The pipes keep this process alive only while an answer is awaited. */
  #ref(busy: boolean): void {
    for (const stream of [this.#child.stdout, this.#child.stdin] as unknown as Array<{ ref(): void; unref(): void }>) {
      if (busy) stream.ref()
      else stream.unref()
    }
  }
}

/** A holder, once it said it is ready; any other ending means namespaces or mounts do not work here. */
async function spawnHolder(pidFile?: string): Promise<{ child: ChildProcess; holder: Holder }> {
  const child = spawn(runtimeBinary(), ['holder', ...(pidFile ? ['--persist', pidFile] : [])], { stdio: ['pipe', 'pipe', 'pipe'], detached: pidFile !== undefined })
  let err = ''
  child.stderr.on('data', (c: Buffer) => (err += c.toString()))
  await new Promise<void>((resolve, reject) => {
    const onReady = messageReader((f) => {
      if (f['event'] !== 'ready') return
      child.stdout.off('data', onReady)
      child.removeAllListeners('exit')
      resolve()
    })
    child.stdout.on('data', onReady)
    child.once('error', reject)
    child.once('exit', (code) =>
      reject(new SandboxError(`cannot hold a mount namespace${privileged ? '' : ' in a user namespace'} (exit ${code}): ${err.trim()}`, { stderr: err })),
    )
  })
  child.stderr.destroy()
  child.unref()
  return { child, holder: new Holder(child) }
}

/**
 * Start a persistent holder with overlays (`[options, target]` pairs) mounted in its own
 * namespace, reachable as `/proc/<pid>/root/<target>`. It is detached and lives until
 * killed; the mounts vanish with it. It writes its pid and start time to `pidFile` before
 * it mounts anything, so a holder whose starter died before recording it is still found.
 */
export async function startHolder(mounts: Array<[string, string]>, pidFile: string): Promise<ProcessId> {
  const { child, holder } = await spawnHolder(pidFile)
  try {
    for (const [options, target] of mounts) await holder.request('m', options, target)
    const detached = await holder.send([['op', 'detach']])
    if (detached['event'] !== 'ok') throw new SandboxError(`the namespace holder did not detach: ${detached['message'] ?? ''}`, {})
  } catch (err) {
    child.kill('SIGKILL')
    throw err
  }
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream!.destroy()
  return holder.id
}

export type SharedHolder = Holder

let shared: Promise<Holder> | null = null

/**
 * This process's shared holder: one namespace holding the overlays of every branch this
 * process makes that does not outlive it. It exits when this process dies (its stdin
 * closes), and every mount with it. Started on first use and again if it died.
 */
export async function sharedHolder(): Promise<SharedHolder> {
  for (let attempt = 0; ; attempt++) {
    const pending = shared ?? (shared = spawnHolder().then((h) => h.holder))
    const holder = await pending.catch((err: unknown) => {
      if (shared === pending) shared = null
      throw err
    })
    if (isAlive(holder.id) || attempt === 2) return holder
    if (shared === pending) shared = null
  }
}

/** Does process `pid` have a user namespace other than ours (an unprivileged holder), which must be entered too? */
export async function ownUserNamespace(pid: number): Promise<boolean> {
  const [theirs, ours] = await Promise.all([readlink(`/proc/${pid}/ns/user`), readlink('/proc/self/ns/user')])
  return theirs !== ours
}

/** This process's shared holder if it is the process `pid` (and runs), else null. */
export async function ownSharedHolder(pid: number): Promise<SharedHolder | null> {
  const ours = shared && (await shared.catch(() => null))
  return ours && ours.id.pid === pid && isAlive(ours.id) ? ours : null
}

/**
 * Whether `id` is a running namespace holder (the runtime's `holder` command). A holder's
 * pid is read from the store, which others may have written: no process is killed or
 * entered as a holder unless it is one.
 */
export function isHolder(id: ProcessId): boolean {
  if (!isAlive(id)) return false
  try {
    const argv = readFileSync(`/proc/${id.pid}/cmdline`, 'utf8').split('\0')
    return basename(argv[0] ?? '') === basename(runtimeBinary()) && argv[1] === 'holder'
  } catch {
    return false
  }
}

/** Kill a holder and wait until it is gone, so its mounts are gone too. */
export async function stopHolder(holder: ProcessId): Promise<void> {
  if (!isHolder(holder)) return
  try {
    process.kill(holder.pid, 'SIGKILL')
  } catch {
    return
  }
  for (let i = 0; i < 2000 && isAlive(holder); i++) await new Promise((r) => setTimeout(r, 1))
}

/**
 * Stop the persistent holder whose pid file is `pidFile` when no branch records it: one
 * started by a process that died before it could write the holder into the branch's state
 * would otherwise hold its mounts (and run) forever.
 */
export async function stopStrayHolders(pidFile: string): Promise<void> {
  let text: string
  try {
    text = readStateTextOrNull(pidFile) ?? ''
  } catch {
    return // not a regular file: no holder wrote it
  }
  const [pid, start] = text.trim().split(' ')
  if (pid && start) await stopHolder({ pid: Number(pid), start })
}
