import { EffectKeyConflictError, EffectToolMissingError, UsageError } from '../errors/index.js'
import { type Digest, digestHex } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import type { ChainHasher } from './ChainHasher.js'
import { appendRecord } from './chain.js'
import { readArgs, recordedForm, readResult, writeArgs, writeResult } from './effectObjects.js'
import { KeyLocks } from './KeyLocks.js'
import { EFFECT_CLASSES, type EffectRecord, type Ledger, type LedgerEntry, recordOf } from '../objects/Ledger.js'
import { keyState, pendingEntries } from './ledgerState.js'
import type { DeferredEffect, EffectsMode, ToolOptions } from './types.js'
import { unionLedgers } from './unionLedgers.js'
import '../util/disposeSymbols.js'

type ToolFn = (args: never) => unknown
interface Registered {
  fn: ToolFn
  options: ToolOptions<never>
}

export interface EffectsState {
  store: Store
  ledger: Ledger
  hasher: ChainHasher
  mode: EffectsMode
  now: () => Date
  /** The latest function registered per tool, shared by a handle and its forks, so a deferred call can run wherever it is committed. */
  tools: Map<string, Registered>
  parent: Effects | null
}

export interface EffectsCommitResult {
  /** The deferred effects that ran now (or were found already run by a sibling: then their recorded entry). */
  executed: LedgerEntry[]
  /** Deferred effects passed on to a parent that is itself speculative: they run when it commits. */
  handedUp: LedgerEntry[]
}

/**
 * A handle on an effects ledger: wraps tools so every call is recorded, replays the
 * recorded result of a key already executed, and holds irreversible calls in an outbox
 * while speculative. Open one with `openEffects`; `fork()` gives each candidate its own.
 * Disposing it (`await using`) drops what it deferred unless it was committed or dropped.
 */
export class Effects implements AsyncDisposable {
  /** Whether `commit()` or `drop()` ended this context. */
  #ended = false
  private state: Ledger
  private readonly keyLocks = new KeyLocks()

  constructor(private readonly ctx: EffectsState) {
    this.state = ctx.ledger
  }

  get mode(): EffectsMode {
    return this.ctx.mode
  }

  get store(): Store {
    return this.ctx.store
  }

  /** Wrap `fn` as a recorded tool. Results are JSON values (undefined becomes null), the same on every call. */
  tool<A, R>(name: string, fn: (args: A) => R | Promise<R>, options: ToolOptions<A> & { class: 'irreversible' }): (args: A) => Promise<Awaited<R> | DeferredEffect>
  tool<A, R>(name: string, fn: (args: A) => R | Promise<R>, options: ToolOptions<A>): (args: A) => Promise<Awaited<R>>
  tool<A, R>(name: string, fn: (args: A) => R | Promise<R>, options: ToolOptions<A>): (args: A) => Promise<unknown> {
    if (!name) throw new UsageError('an effects tool needs a name')
    if (!EFFECT_CLASSES.includes(options?.class)) throw new UsageError(`tool ${name}: class must be one of ${EFFECT_CLASSES.join(', ')}`, { tool: name })
    const tool = { fn: fn as ToolFn, options: options as ToolOptions<never> }
    this.ctx.tools.set(name, tool)
    return (args: A) => this.call(name, tool, args)
  }

  entries(): readonly LedgerEntry[] {
    return this.state.entries
  }

  /** The outbox: irreversible calls deferred and neither run nor dropped yet. */
  pending(): LedgerEntry[] {
    return pendingEntries(this.state.entries)
  }

  /** Store the ledger as it is now; its digest is what a snapshot's `effects` layer names. */
  async ledger(): Promise<Digest> {
    const digest = await this.ctx.store.writeObject(this.state)
    await this.ctx.store.sync()
    return digest
  }

  /** A child handle (a branch, a candidate) starting from this ledger; its commit runs its outbox and merges it back here. */
  fork({ mode = 'speculative' }: { mode?: EffectsMode } = {}): Effects {
    return new Effects({ ...this.ctx, ledger: this.state, mode, parent: this })
  }

  /** A child handle continuing `ledger` (a branch's stored outbox, verified by the caller); its commit runs its outbox and merges it back here. */
  attach(ledger: Ledger, { mode = 'speculative' }: { mode?: EffectsMode } = {}): Effects {
    return new Effects({ ...this.ctx, ledger, mode, parent: this })
  }

  /**
   * The context commits: run each deferred effect once per key (skipping a key a sibling
   * already ran: its recorded entry is taken instead), then merge this ledger into the parent.
   * Into a speculative parent nothing runs: the outbox moves up with the merge.
   * @throws {EffectToolMissingError} a deferred effect's tool is not registered
   * @throws {EffectKeyConflictError} the merge into the parent finds one key with two results
   */
  async commit(): Promise<EffectsCommitResult> {
    this.#ended = true
    const pending = this.pending()
    if (this.ctx.parent?.mode === 'speculative') {
      this.ctx.parent.absorb(this.state)
      return { executed: [], handedUp: pending }
    }
    const executed: LedgerEntry[] = []
    for (const entry of pending) executed.push(await this.lockChain(entry.idempotencyKey, () => this.runDeferred(entry)))
    this.ctx.parent?.absorb(this.state)
    return { executed, handedUp: [] }
  }

  /**
   * The context is abandoned: every deferred effect is recorded `dropped` and never runs. The
   * parent is not touched. One being sent (`sending`) may have arrived, so it is never dropped;
   * `keep`: keys another context has committed, left as they are.
   */
  async drop({ keep = () => false }: { keep?: (key: string) => boolean } = {}): Promise<LedgerEntry[]> {
    this.#ended = true
    const dropped: LedgerEntry[] = []
    for (const entry of this.pending().filter((e) => e.status === 'deferred' && !keep(e.idempotencyKey))) {
      dropped.push(await this.lockChain(entry.idempotencyKey, async () => this.append({ ...recordOf(entry), at: this.at(), status: 'dropped', resultHash: null })))
    }
    return dropped
  }

  /** A context neither committed nor dropped is abandoned: `drop()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.#ended) await this.drop()
  }

  private absorb(ledger: Ledger): void {
    this.state = unionLedgers(this.state, ledger, this.ctx.hasher)
  }

  private async call(name: string, { fn, options }: Registered, args: unknown): Promise<unknown> {
    const argsHash = await writeArgs(this.ctx.store, name, args)
    const key = options.key ? options.key(args as never) : `${name}:${digestHex(argsHash)}`
    if (typeof key !== 'string' || key === '') throw new UsageError(`tool ${name}: its key function must return a non-empty string`, { tool: name })
    const record: EffectRecord = { at: this.at(), tool: name, argsHash, idempotencyKey: key, class: options.class, status: 'executed', resultHash: null }
    if (options.class === 'read') return this.execute(fn, args, record)
    return this.lockChain(key, () => this.callOnce(fn, args, record))
  }

  private async callOnce(fn: ToolFn, args: unknown, record: EffectRecord): Promise<unknown> {
    const recorded = this.recorded(record.idempotencyKey)
    if (recorded && recorded.status !== 'dropped' && recorded.argsHash !== record.argsHash) throw argsConflict(record, recorded)
    if (recorded?.status === 'executed') return this.replay(recorded)
    if (recorded?.status === 'deferred' || recorded?.status === 'sending') return placeholder(recorded)
    if (record.class === 'irreversible' && this.mode === 'speculative') return placeholder(this.append({ ...record, status: 'deferred' }))
    return this.execute(fn, args, record)
  }

  private async runDeferred(entry: LedgerEntry): Promise<LedgerEntry> {
    const recorded = this.recorded(entry.idempotencyKey)
    if (recorded?.status === 'executed') {
      if (recorded.argsHash !== entry.argsHash) throw argsConflict(entry, recorded)
      return this.adopt(recorded)
    }
    const tool = this.ctx.tools.get(entry.tool)
    if (!tool)
      throw new EffectToolMissingError(`deferred effect ${entry.tool} (key ${JSON.stringify(entry.idempotencyKey)}) cannot run: register the tool on this handle first`, {
        tool: entry.tool,
      })
    await this.execute(tool.fn, await readArgs(this.ctx.store, entry.argsHash, `ledger entry ${entry.seq}`), { ...recordOf(entry), at: this.at() })
    const done = this.state.entries.at(-1)!
    this.ctx.parent?.adopt(done)
    return done
  }

  private async execute(fn: ToolFn, args: unknown, record: EffectRecord): Promise<unknown> {
    const result = recordedForm(record.tool, await fn(args as never))
    this.append({ ...record, status: 'executed', resultHash: await writeResult(this.ctx.store, result.text) })
    return result.value
  }

  /** A key's state here, or, when a parent (or its parent) has executed it since this handle forked, that entry. */
  private recorded(key: string): LedgerEntry | null {
    const local = keyState(this.state.entries, key)
    if (local?.status === 'executed') return local
    for (let up = this.ctx.parent; up; up = up.ctx.parent) {
      const there = keyState(up.state.entries, key)
      if (there?.status === 'executed') return there
    }
    return local
  }

  private async replay(recorded: LedgerEntry): Promise<unknown> {
    this.adopt(recorded)
    return readResult(this.ctx.store, recorded.resultHash!, `ledger entry ${recorded.seq}`)
  }

  /** Take an executed entry found upstream into this ledger (its record unchanged, so a merge sees one effect). */
  private adopt(entry: LedgerEntry): LedgerEntry {
    const local = keyState(this.state.entries, entry.idempotencyKey)
    return local?.status === 'executed' ? local : this.append(recordOf(entry))
  }

  private append(record: EffectRecord): LedgerEntry {
    this.state = appendRecord(this.state, record, this.ctx.hasher)
    return this.state.entries.at(-1)!
  }

  private at(): string {
    return this.ctx.now().toISOString()
  }

  /** Run `work` holding `key` in this handle and every ancestor (root first), so siblings never run one key twice. */
  private lockChain<T>(key: string, work: () => Promise<T>): Promise<T> {
    const locked = () => this.keyLocks.with(key, work)
    return this.ctx.parent ? this.ctx.parent.lockChain(key, locked) : locked()
  }
}

function placeholder(entry: LedgerEntry): DeferredEffect {
  return { deferred: true, tool: entry.tool, idempotencyKey: entry.idempotencyKey, seq: entry.seq }
}

function argsConflict(call: EffectRecord, recorded: LedgerEntry): EffectKeyConflictError {
  return new EffectKeyConflictError(
    `tool ${call.tool}: key ${JSON.stringify(call.idempotencyKey)} was already used with other arguments (ledger entry ${recorded.seq}); one key must mean one effect`,
    { tool: call.tool, idempotencyKey: call.idempotencyKey, reason: 'args', hashes: [recorded.argsHash, call.argsHash] },
  )
}
