import type { RunnableConfig } from '@langchain/core/runnables'
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
} from '@langchain/langgraph-checkpoint'
import { UsageError } from '../../errors/index.js'
import { appendImage } from '../../image/appendImage.js'
import { servedScanner } from '../../service/servedScanner.js'
import { TaskQueues } from '../../util/TaskQueues.js'
import { forkImage } from '../../image/forkImage.js'
import { incomingImage } from '../../image/incomingImage.js'
import type { Digest } from '../../objects/digest.js'
import { type StoreLocator, openStore } from '../../store/findStore.js'
import { deleteRef, listRefs, readRef, updateRef } from '../../store/refs.js'
import { resolveId } from '../../store/resolveId.js'
import type { Store } from '../../store/Store.js'
import { readSnapshot } from '../../world/tree/readObjects.js'
import type { Snapshot } from '../../objects/Snapshot.js'
import type { CheckpointLog, LogEntry, Typed } from '../../objects/CheckpointLog.js'
import { type KnownHistory, type StoredCheckpoint, ThreadHistory, loadHistory, readCheckpointLog } from './checkpointLog.js'
import { describeValue } from '../../util/describeValue.js'
import { THREAD_REFS, threadIdOf, threadRef } from './threadRef.js'

export interface ForkpointSaverOptions extends StoreLocator {
  /**
   * Snapshot the workspace's files into the image of every checkpoint (the default), so
   * going back to a checkpoint can bring its files back too. `false`: each image carries
   * the files of the thread's previous one (an agent that keeps no files).
   */
  captureWorkspace?: boolean
  /** The images' `meta.agent` (default `langgraph`). */
  agent?: string
  serde?: SerializerProtocol
  /** Where FORKPOINT_KEY is read from, to verify the effects ledger of an image a thread starts from or forks. @default process.env */
  env?: NodeJS.ProcessEnv
}

export interface ForkThreadOptions {
  /** How many forks (1 to 10,000). */
  n: number
  /** Fork from this checkpoint (the image made when it was put), not the thread's latest state. */
  checkpointId?: string
  checkpointNs?: string
}

export interface ForkedThread {
  /** `<thread id>-fork-<index>`: pass it as `thread_id` to go on from the fork. */
  threadId: string
  /** The fork's image: the files and checkpoints it starts from. */
  image: Digest
  index: number
}

interface ThreadState {
  image: Digest
  known: KnownHistory | null
}

/**
 * A LangGraph checkpointer that keeps threads in the forkpoint store: every checkpoint
 * and every task's writes are a step of the thread's history, and the thread's latest
 * image (`refs/threads/<thread id>`) holds that history as its `checkpoints` layer beside
 * the workspace's files. So a thread is an image like any other: `forkpoint log`, `diff`,
 * `checkout`, `push` and `merge` work on it, and `forkThread` forks it.
 *
 * @example
 * const graph = builder.compile({ checkpointer: new ForkpointSaver() })
 */
export class ForkpointSaver extends BaseCheckpointSaver {
  readonly #locator: StoreLocator
  readonly #captureWorkspace: boolean
  readonly #agent: string
  readonly #env: NodeJS.ProcessEnv
  #opened: Promise<{ store: Store; workspace: string }> | null = null
  readonly #threads = new Map<string, ThreadState>()
  readonly #queues = new TaskQueues()

  constructor({ captureWorkspace = true, agent = 'langgraph', serde, env = process.env, ...locator }: ForkpointSaverOptions = {}) {
    super(serde)
    this.#locator = locator
    this.#captureWorkspace = captureWorkspace
    this.#agent = agent
    this.#env = env
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId: unknown = config.configurable?.thread_id
    const checkpointId = getCheckpointId(config) // '' and absent: the latest; LangGraph's older `thread_ts` too
    const ns = namespaceOf(config)
    if (threadId === undefined) return undefined
    const ref = threadRef(threadId)
    const { store } = await this.#open()
    const history = await this.#history(store, ref)
    const stored = checkpointId ? history.get(ns, checkpointId) : history.newestFirst(ns)[0]
    return stored && this.#tuple(store, threadIdOf(ref), history, stored)
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { thread_id: threadId, checkpoint_ns: onlyNs, checkpoint_id: onlyId } = config.configurable ?? {}
    if (onlyNs !== undefined) namespaceOf(config)
    const before: unknown = options.before?.configurable?.checkpoint_id
    const { store } = await this.#open()
    // a ref under refs/threads/ that threadRef would not have made (written by hand) is no thread of ours
    const refs = threadId !== undefined ? [threadRef(threadId)] : (await listRefs(store, THREAD_REFS)).map((r) => r.name).filter(isThreadRef)
    let left = options.limit ?? Infinity
    for (const ref of refs) {
      const history = await this.#history(store, ref)
      for (const ns of history.namespaces()) {
        if (onlyNs !== undefined && ns !== onlyNs) continue
        for (const stored of history.newestFirst(ns)) {
          if (left <= 0) return
          if (onlyId && stored.id !== onlyId) continue
          if (typeof before === 'string' && stored.id >= before) continue
          const metadata = await this.#load<CheckpointMetadata>(store, stored.metadata)
          if (options.filter && !Object.entries(options.filter).every(([key, value]) => (metadata as Record<string, unknown>)[key] === value)) continue
          left--
          yield await this.#tuple(store, threadIdOf(ref), history, stored, metadata)
        }
      }
    }
  }

  /**
   * Stores the checkpoint without its channel values, and the value of each channel
   * `newVersions` names at its new version: a value that did not change is not stored again.
   * Takes its place in the thread's queue before anything is awaited, so the log holds puts
   * and writes in the order LangGraph made them (it does not wait for one before the next).
   */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const threadId = requireThread(config, 'put a checkpoint')
    const ns = namespaceOf(config)
    assertId('checkpoint.id', checkpoint.id)
    const parent: unknown = config.configurable?.checkpoint_id
    const { channel_values: values, ...rest } = copyCheckpoint(checkpoint)
    await this.#append(threadId, this.#captureWorkspace, `checkpoint ${checkpoint.id}${ns ? ` (${ns})` : ''}`, async (store) => ({
      op: 'put',
      ns,
      id: checkpoint.id,
      parent: typeof parent === 'string' && parent !== '' ? parent : null,
      checkpoint: await this.#store(store, { ...rest, channel_values: {} }),
      metadata: await this.#store(store, metadata),
      values: await Promise.all(
        Object.entries(newVersions).map(async ([channel, version]) => ({
          channel,
          version,
          value: Object.hasOwn(values, channel) ? await this.#store(store, values[channel]) : null,
        })),
      ),
    }))
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } }
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const threadId = requireThread(config, 'put writes')
    const ns = namespaceOf(config)
    const checkpointId: unknown = config.configurable?.checkpoint_id
    assertId('checkpoint_id', checkpointId)
    assertId('task id', taskId)
    await this.#append(threadId, false, `writes of ${checkpointId}${ns ? ` (${ns})` : ''}`, async (store) => ({
      op: 'writes',
      ns,
      id: checkpointId,
      taskId,
      taskPath,
      writes: await Promise.all(
        writes.map(async ([channel, value], idx) => ({
          idx: Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel]! : idx,
          channel,
          value: await this.#store(store, value),
        })),
      ),
    }))
  }

  /** A value as the serializer writes it, in the store. */
  async #store(store: Store, value: unknown): Promise<Typed> {
    const [type, bytes] = await this.serde.dumpsTyped(value)
    return { type, blob: await store.writeBlob(bytes) }
  }

  /** Forget a thread: its ref goes; its images stay reachable through the reflog until `forkpoint gc` expires them. */
  async deleteThread(threadId: string): Promise<void> {
    const ref = threadRef(threadId)
    await this.#queues.run(ref, async () => {
      await deleteRef((await this.#open()).store, ref)
      this.#threads.delete(ref)
    })
  }

  /**
   * Fork a thread into `n` new ones, each starting from the thread's image (its files and
   * checkpoints): `forkImage` makes the children, and each gets a thread ref of its own.
   * Going on with a fork's `threadId` leaves the thread and the other forks as they were.
   * @throws {UsageError} no such thread or checkpoint; a fork's thread id is taken
   */
  async forkThread(threadId: string, { n, checkpointId, checkpointNs = '' }: ForkThreadOptions): Promise<ForkedThread[]> {
    const ref = threadRef(threadId)
    const { store } = await this.#open()
    const head = await readRef(store, ref)
    if (!head) throw new UsageError(`no thread ${JSON.stringify(threadId)} in this store`, { field: 'thread_id' })
    const image = checkpointId === undefined ? head : await this.#imageOfPut(store, head, checkpointNs, checkpointId)
    const names = await freeForkNames(store, threadId, n) // checked before any fork is made
    const children = await forkImage({ store, id: image, n, env: this.#env })
    return Promise.all(children.map(async (child, i) => ({ threadId: names[i]!, image: await this.threadFrom(names[i]!, child.id), index: child.index })))
  }

  /** The image a thread is at now, or null when there is no such thread. */
  async threadImage(threadId: string): Promise<Digest | null> {
    const { store } = await this.#open()
    return readRef(store, threadRef(threadId))
  }

  /**
   * Start thread `threadId` at an image that holds a thread (one pulled from a registry, a
   * fork made by `forkpoint fork`): the thread goes on from that image's checkpoints.
   * @throws {UsageError} the thread exists, or the image holds no checkpoints
   * @throws {MalformedObjectError} the image's checkpoints layer is not a checkpoint log (exit 5)
   */
  async threadFrom(threadId: string, image: string): Promise<Digest> {
    const ref = threadRef(threadId)
    const { store } = await this.#open()
    const id = await resolveId(store, image)
    const snapshot = await incomingImage(store, id, this.#env)
    if (!snapshot.checkpoints) throw new UsageError(`image ${id} holds no LangGraph thread (it has no checkpoints layer)`, { field: 'image' })
    await updateRef({ store, name: ref, id, expected: null, message: `thread from ${id}` }).catch((err: unknown) => {
      if ((err as { code?: string }).code !== 'RefConflictError') throw err
      throw new UsageError(`thread ${JSON.stringify(threadId)} already exists; delete it or choose another thread id`, { field: 'thread_id' })
    })
    return id
  }

  /** Walk the thread's images back to the one whose newest step is the put of that checkpoint. */
  async #imageOfPut(store: Store, head: Digest, ns: string, id: string): Promise<Digest> {
    for (let at: Digest | undefined = head; at;) {
      const image: Snapshot = await readSnapshot(store, at)
      if (!image.checkpoints) break
      const { entry } = await readCheckpointLog(store, image.checkpoints)
      if (entry.op === 'put' && entry.ns === ns && entry.id === id) return at
      at = image.parents[0]
    }
    throw new UsageError(`no checkpoint ${id}${ns ? ` in namespace ${JSON.stringify(ns)}` : ''} in this thread's history`, { field: 'checkpoint_id' })
  }

  async #tuple(store: Store, threadId: string, history: ThreadHistory, stored: StoredCheckpoint, metadata?: CheckpointMetadata): Promise<CheckpointTuple> {
    const { ns, id, parent } = stored
    const checkpoint = await this.#load<Checkpoint>(store, stored.checkpoint)
    checkpoint.channel_values = {}
    for (const { channel, value } of history.valuesAt(stored, checkpoint.channel_versions ?? {})) checkpoint.channel_values[channel] = await this.#load(store, value)
    if (checkpoint.v < 4 && parent !== null) await this.#migratePendingSends(store, history, checkpoint, ns, parent)
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      history.writesOf(ns, id).map(async (w): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await this.#load(store, w.value)]),
    )
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: id } },
      checkpoint,
      metadata: metadata ?? (await this.#load<CheckpointMetadata>(store, stored.metadata)),
      pendingWrites,
    }
    if (parent !== null) tuple.parentConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parent } }
    return tuple
  }

  /** Checkpoints before format 4 kept pending sends as their parent's writes to TASKS; LangGraph reads them from the channel. */
  async #migratePendingSends(store: Store, history: ThreadHistory, checkpoint: Checkpoint, ns: string, parent: string): Promise<void> {
    const sends = history.writesOf(ns, parent).filter((w) => w.channel === TASKS)
    checkpoint.channel_values ??= {}
    checkpoint.channel_values[TASKS] = await Promise.all(sends.map((w) => this.#load(store, w.value)))
    checkpoint.channel_versions ??= {}
    const versions = Object.values(checkpoint.channel_versions)
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined)
  }

  async #load<T>(store: Store, typed: Typed): Promise<T> {
    return (await this.serde.loadsTyped(typed.type, await store.readBlob(typed.blob))) as T
  }

  /**
   * Add one step to a thread: one log object chained onto the thread's, in a new image of
   * the thread (the workspace scanned anew when `scan`); steps of one thread are queued in
   * this process, and `appendImage` keeps other processes' out while it builds on the ref.
   */
  async #append(threadId: string, scan: boolean, what: string, makeEntry: (store: Store) => Promise<LogEntry>): Promise<void> {
    const ref = threadRef(threadId)
    await this.#queues.run(ref, async () => {
      const { store, workspace } = await this.#open()
      let step: { entry: LogEntry; log: Digest; known: KnownHistory | null } | undefined
      const image = await appendImage({
        store,
        workspace,
        ref,
        scan,
        scanner: servedScanner,
        agent: this.#agent,
        message: `${what} of thread ${threadId}`,
        layers: async (current) => {
          const known = current ? (await this.#state(store, ref, current)).known : null
          const entry = await makeEntry(store)
          const log = await store.writeObject({ kind: 'checkpoint-log', schemaVersion: 1, framework: 'langgraph', previous: known?.log ?? null, entry } satisfies CheckpointLog)
          step = { entry, log, known }
          return { checkpoints: log }
        },
      })
      const { entry, log, known } = step!
      const history = known?.history ?? new ThreadHistory()
      history.apply(entry)
      this.#threads.set(ref, { image, known: { log, history } })
    })
  }

  async #history(store: Store, ref: string): Promise<ThreadHistory> {
    const image = await readRef(store, ref)
    return (image && (await this.#state(store, ref, image)).known?.history) ?? new ThreadHistory()
  }

  /** What the thread at `image` holds; read from the store only as far as the last state this saver knew. */
  async #state(store: Store, ref: string, image: Digest): Promise<ThreadState> {
    const cached = this.#threads.get(ref)
    if (cached?.image === image) return cached
    const { checkpoints } = await readSnapshot(store, image)
    const known = checkpoints ? { log: checkpoints, history: await loadHistory(store, checkpoints, cached?.known ?? undefined) } : null
    const state = { image, known }
    this.#threads.set(ref, state)
    return state
  }

  #open(): Promise<{ store: Store; workspace: string }> {
    // a store not there yet (no 'forkpoint init') is looked for again next time
    this.#opened ??= openStore(this.#locator).catch((err: unknown) => {
      this.#opened = null
      throw err
    })
    return this.#opened
  }
}

/** `<thread>-fork-<i>` for the n lowest i whose thread does not exist yet. */
async function freeForkNames(store: Store, threadId: string, n: number): Promise<string[]> {
  const names: string[] = []
  for (let i = 0; names.length < n; i++) {
    const name = `${threadId}-fork-${i}`
    if ((await readRef(store, threadRef(name))) === null) names.push(name)
  }
  return names
}

function isThreadRef(ref: string): boolean {
  try {
    return threadRef(threadIdOf(ref)) === ref
  } catch {
    return false
  }
}

function requireThread(config: RunnableConfig, what: string): string {
  const threadId: unknown = config.configurable?.thread_id
  if (threadId === undefined) {
    throw new UsageError(
      `cannot ${what}: config.configurable has no thread_id; run the graph with { configurable: { thread_id: '...' } } so the checkpointer knows which thread to keep`,
      {
        field: 'thread_id',
      },
    )
  }
  threadRef(threadId)
  return threadId as string
}

function namespaceOf(config: RunnableConfig): string {
  const ns: unknown = config.configurable?.checkpoint_ns ?? ''
  if (typeof ns !== 'string') throw new UsageError(`checkpoint_ns must be a string (got ${describeValue(ns)})`, { field: 'checkpoint_ns' })
  return ns
}

function assertId(field: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${field} must be a non-empty string (got ${describeValue(value)})`, { field })
}
