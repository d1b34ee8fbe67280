import { AsyncLocalStorage } from 'node:async_hooks'
import { OfflineViolationError, ReplayDivergenceError } from '../../errors/index.js'
import type { JournalEntry, JournalSink, StepEntry } from './journal.js'
import type { ReplayMatcher } from '../replay/ReplayMatcher.js'
import type { JsonValue, Step, StepError, StepType } from '../../objects/Run.js'
import type { StepSealer } from '../redact/StepSealer.js'

export interface StepSpec {
  name: string
  type: StepType
  input: unknown
  meta?: unknown
  /** False for outputs: during replay they are matched and consumed, but the live value is what gets recorded. */
  serve?: boolean
}

/** What replay does with a call the recording does not hold: fail it as a divergence, or (ci check) record it as an offline error. */
export type MissPolicy = 'fail' | 'offline-error'

const SESSION = Symbol.for('forkpoint.trace.session')
const context = new AsyncLocalStorage<string>()

/** Wall-clock epoch milliseconds that `--deterministic` pinning of Date cannot touch. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now()
}

/**
 * One process's recording (and, during replay, serving) of steps. Every capture path —
 * the Recorder SDK, in-process HTTP capture, the recording proxy — goes through `begin`,
 * so all three produce the same steps. Entries go to a sink as they finish.
 */
export class Session {
  private seq = 0
  private readonly pid = process.pid
  onDivergence: ((err: ReplayDivergenceError) => void) | null = null

  constructor(
    readonly sealer: StepSealer,
    readonly sink: JournalSink,
    readonly matcher: ReplayMatcher | null = null,
    readonly onMiss: MissPolicy = 'fail',
  ) {}

  /** The session this process records into, if one was installed (shared across module copies). */
  static current(): Session | null {
    return ((globalThis as Record<symbol, unknown>)[SESSION] as Session | undefined) ?? null
  }

  static install(session: Session | null): void {
    ;(globalThis as Record<symbol, unknown>)[SESSION] = session ?? undefined
  }

  write(entry: JournalEntry): void {
    this.sink.write(entry)
  }

  /** Start a call: served from the recording when replaying and it matches, else live. */
  begin(described: StepSpec): ActiveCall {
    const key = `${this.pid}:${++this.seq}`
    const parent = context.getStore()
    const at = preciseNow()
    const input = this.sealer.seal(described.input, 'input')
    // after the input, so a secret first seen in it is already known; names reach runs.db, listings and messages
    const spec = { ...described, name: this.sealer.redactor.redactText(described.name) }
    const taken = this.matcher?.take(spec.name, input.hash) ?? null
    if (taken && spec.serve !== false) {
      this.writeServed(key, parent, at, taken.step, taken.nested)
      return new ActiveCall(this, spec, key, parent, at, input, taken.step)
    }
    if (!taken && this.matcher && !this.matcher.isLive) this.miss(spec, key, parent, at, input)
    return new ActiveCall(this, spec, key, parent, at, input, null)
  }

  /** Record `fn` as one step (served instead of run during replay). */
  async call<T>(spec: StepSpec, fn: () => T | Promise<T>): Promise<T> {
    const active = this.begin(spec)
    if (active.recorded) return active.servedOutput() as T
    try {
      const output = await active.within(fn)
      active.finish(output)
      return output
    } catch (err) {
      active.fail(err)
      throw err
    }
  }

  private miss(spec: StepSpec, key: string, parent: string | undefined, at: number, input: { stored: JsonValue; hash: string }): never {
    const expected = this.matcher!.expected()
    const where = expected ? `the recording expects step ${expected.idx} "${expected.name}" next` : 'the recording has no steps left'
    if (this.onMiss === 'offline-error') {
      const err = new OfflineViolationError(`offline: ${spec.type} "${spec.name}" is not in the recording (${where})`, { step: spec.name })
      this.write({
        t: 'step',
        key,
        ...(parent ? { parent } : {}),
        name: spec.name,
        type: spec.type,
        input: input.stored,
        output: null,
        error: this.sealer.sealError(err),
        inputHash: input.hash,
        outputHash: this.sealer.seal(null, 'output').hash,
        at,
        durationMs: 0,
      })
      throw err
    }
    const message = `replay diverged: the agent made ${spec.type} call "${spec.name}" (input ${input.hash.slice(0, 12)}) that is not in the recording; ${where}`
    this.write({
      t: 'divergence',
      at,
      message,
      step: { name: spec.name, type: spec.type, inputHash: input.hash },
      expected: expected && { idx: expected.idx, name: expected.name },
    })
    const err = new ReplayDivergenceError(message, { step: spec.name, type: spec.type, inputHash: input.hash, expected: expected?.idx ?? null })
    this.onDivergence?.(err)
    throw err
  }

  private writeServed(key: string, parent: string | undefined, at: number, step: Step, nested: Step[]): void {
    const keys = new Map<number, string>([[step.idx, key]])
    this.write(servedEntry(step, key, parent, at))
    nested.forEach((child, n) => {
      const childKey = `${key}/${n + 1}`
      keys.set(child.idx, childKey)
      this.write(servedEntry(child, childKey, keys.get(child.meta?.['parent'] as number) ?? key, at + (n + 1) * 1e-6))
    })
  }

  /** Run `fn` with this call as the parent of the calls it makes. */
  runWithin<T>(key: string, fn: () => T): T {
    return context.run(key, fn)
  }
}

function servedEntry(step: Step, key: string, parent: string | undefined, at: number): StepEntry {
  const { parent: _recordedParent, ...meta } = step.meta ?? {}
  return {
    t: 'step',
    key,
    ...(parent ? { parent } : {}),
    name: step.name,
    type: step.type,
    input: step.input,
    output: step.output,
    ...(step.error !== undefined ? { error: step.error } : {}),
    inputHash: step.inputHash,
    outputHash: step.outputHash,
    at,
    durationMs: 0,
    meta: { ...meta, replayed: true },
  }
}

/** A call in progress: finish it with its output or its error (live), or take what the recording served. */
export class ActiveCall {
  private done = false

  constructor(
    private readonly session: Session,
    readonly spec: StepSpec,
    readonly key: string,
    readonly parent: string | undefined,
    readonly at: number,
    readonly input: { stored: JsonValue; hash: string; clear: JsonValue },
    readonly recorded: Step | null,
  ) {}

  within<T>(fn: () => T): T {
    return this.session.runWithin(this.key, fn)
  }

  /** The served output in plaintext; a recorded failure is thrown again as it was. */
  servedOutput(): JsonValue {
    const step = this.recorded!
    if (step.error !== undefined) throw recordedError(this.session.sealer.open(step.error as JsonValue, 'error') as unknown as StepError)
    return this.session.sealer.open(step.output, 'output')
  }

  /** The served step's meta in plaintext (HTTP capture keeps the raw exchange there). */
  servedMeta(): { [key: string]: JsonValue } {
    const meta = this.recorded?.meta ?? {}
    return typeof meta['sealed'] === 'string' ? (this.session.sealer.open(meta['sealed'], 'meta') as { [key: string]: JsonValue }) : meta
  }

  finish(output: unknown, meta: unknown = this.spec.meta): void {
    this.write(this.session.sealer.seal(output, 'output'), undefined, meta)
  }

  fail(err: unknown, meta: unknown = this.spec.meta): void {
    this.write(this.session.sealer.seal(null, 'output'), this.session.sealer.sealError(err), meta)
  }

  private write(output: { stored: JsonValue; hash: string }, error: StepError | string | undefined, meta: unknown): void {
    if (this.done) return
    this.done = true
    const sealedMeta = this.session.sealer.sealMeta(meta)
    this.session.write({
      t: 'step',
      key: this.key,
      ...(this.parent ? { parent: this.parent } : {}),
      name: this.spec.name,
      type: this.spec.type,
      input: this.input.stored,
      output: output.stored,
      ...(error !== undefined ? { error } : {}),
      inputHash: this.input.hash,
      outputHash: output.hash,
      at: this.at,
      durationMs: preciseNow() - this.at,
      ...(sealedMeta ? { meta: sealedMeta } : {}),
    })
  }
}

/** A recorded failure, thrown again during replay with its name and message. */
export function recordedError(e: StepError): Error {
  const err = new Error(e.message)
  err.name = e.name
  if (e.code) (err as Error & { code?: string }).code = e.code
  return err
}
