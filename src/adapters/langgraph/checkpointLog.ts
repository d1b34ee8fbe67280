import { compareWritesSortKeys, writesSortKey } from '@langchain/langgraph-checkpoint'
import { MalformedObjectError } from '../../errors/index.js'
import { type Digest, isDigest } from '../../store/digest.js'
import type { Store } from '../../store/Store.js'

/** A value as the saver's serializer wrote it: its type tag and the blob of its bytes. */
export interface Typed {
  type: string
  blob: Digest
}

export interface PutEntry {
  op: 'put'
  ns: string
  id: string
  /** The checkpoint this one was made from (LangGraph's parent), null for a thread's first. */
  parent: string | null
  /** The checkpoint without its channel values: those are in `values` and earlier puts', by channel and version. */
  checkpoint: Typed
  metadata: Typed
  /** The channels this checkpoint gave new versions: each one's value at its new version (null: the channel is empty). */
  values: ChannelValue[]
}

export interface ChannelValue {
  channel: string
  version: number | string
  value: Typed | null
}

export interface WritesEntry {
  op: 'writes'
  ns: string
  /** The checkpoint the writes belong to. */
  id: string
  taskId: string
  taskPath: string
  /** `idx`: the write's place in its task's list, or LangGraph's negative index of a special channel (errors, interrupts). */
  writes: Array<{ idx: number; channel: string; value: Typed }>
}

export type LogEntry = PutEntry | WritesEntry

/**
 * One step of a thread's history, chained to the one before: the `checkpoints` layer of a
 * thread's image names the newest. A put or a task's writes adds one small object, so a
 * thread of n steps costs n objects, and every image of the thread shares its history's prefix.
 */
export interface CheckpointLog {
  kind: 'checkpoint-log'
  schemaVersion: 1
  framework: 'langgraph'
  previous: Digest | null
  entry: LogEntry
  [unknown: string]: unknown
}

export interface StoredWrite {
  taskId: string
  idx: number
  channel: string
  value: Typed
  taskPath: string
}

export interface StoredCheckpoint {
  ns: string
  id: string
  parent: string | null
  checkpoint: Typed
  metadata: Typed
}

/** A thread's checkpoints and writes as its log says, by namespace and id. */
export class ThreadHistory {
  readonly #checkpoints = new Map<string, Map<string, StoredCheckpoint>>()
  readonly #writes = new Map<string, Map<string, StoredWrite>>()
  /** By (namespace, channel, version): the value each checkpoint that set it stored. Two branches of a thread can give one channel the same version. */
  readonly #values = new Map<string, Array<{ setBy: string; value: Typed | null }>>()

  apply(entry: LogEntry): void {
    if (entry.op === 'put') {
      const { op: _op, values, ...checkpoint } = entry
      this.#namespace(entry.ns).set(entry.id, checkpoint)
      for (const { channel, version, value } of values) {
        const key = JSON.stringify([entry.ns, channel, version])
        this.#values.set(key, [...(this.#values.get(key) ?? []), { setBy: entry.id, value }])
      }
      return
    }
    const key = JSON.stringify([entry.ns, entry.id])
    const stored = this.#writes.get(key) ?? new Map<string, StoredWrite>()
    this.#writes.set(key, stored)
    for (const write of entry.writes) {
      const inner = `${entry.taskId},${write.idx}`
      // a task's regular writes are kept from its first attempt; special ones (negative idx) from its last, as LangGraph's own savers do
      if (write.idx >= 0 && stored.has(inner)) continue
      stored.set(inner, { taskId: entry.taskId, idx: write.idx, channel: write.channel, value: write.value, taskPath: entry.taskPath })
    }
  }

  namespaces(): string[] {
    return [...this.#checkpoints.keys()]
  }

  get(ns: string, id: string): StoredCheckpoint | undefined {
    return this.#checkpoints.get(ns)?.get(id)
  }

  /** A namespace's checkpoints, newest first (LangGraph's ids sort by time). */
  newestFirst(ns: string): StoredCheckpoint[] {
    return [...(this.#checkpoints.get(ns)?.values() ?? [])].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
  }

  /** The writes stored against a checkpoint, in the order LangGraph applies a superstep's writes. */
  writesOf(ns: string, id: string): StoredWrite[] {
    const stored = [...(this.#writes.get(JSON.stringify([ns, id]))?.values() ?? [])]
    const keyed = stored.map((write) => ({ write, key: writesSortKey(write.taskPath, write.taskId, write.idx) }))
    return keyed.sort((a, b) => compareWritesSortKeys(a.key, b.key)).map(({ write }) => write)
  }

  /**
   * The value of each channel at the version the checkpoint gives it, as the nearest of the
   * checkpoint and its ancestors that stored that version set it (another branch of the
   * thread may have stored the same version with another value); a channel with none stored,
   * or stored empty, is left out.
   */
  valuesAt(at: StoredCheckpoint, versions: Record<string, number | string>): Array<{ channel: string; value: Typed }> {
    const nearness = new Map<string, number>()
    for (let c: StoredCheckpoint | undefined = at, depth = 0; c && !nearness.has(c.id); c = c.parent === null ? undefined : this.get(at.ns, c.parent), depth++)
      nearness.set(c.id, depth)
    const found: Array<{ channel: string; value: Typed }> = []
    for (const [channel, version] of Object.entries(versions)) {
      const stored = (this.#values.get(JSON.stringify([at.ns, channel, version])) ?? []).filter((s) => nearness.has(s.setBy))
      const nearest = stored.sort((a, b) => nearness.get(a.setBy)! - nearness.get(b.setBy)!)[0]
      if (nearest?.value) found.push({ channel, value: nearest.value })
    }
    return found
  }

  /** A copy to extend while readers may hold this one. */
  clone(): ThreadHistory {
    const copy = new ThreadHistory()
    for (const [ns, checkpoints] of this.#checkpoints) copy.#checkpoints.set(ns, new Map(checkpoints))
    for (const [key, writes] of this.#writes) copy.#writes.set(key, new Map(writes))
    for (const [key, values] of this.#values) copy.#values.set(key, [...values])
    return copy
  }

  #namespace(ns: string): Map<string, StoredCheckpoint> {
    const found = this.#checkpoints.get(ns)
    if (found) return found
    const made = new Map<string, StoredCheckpoint>()
    this.#checkpoints.set(ns, made)
    return made
  }
}

/** What a saver knows of a thread: the history as of the log object `log`. */
export interface KnownHistory {
  log: Digest
  history: ThreadHistory
}

/**
 * The history the log ending at `head` holds. With `known` (an older state of the same
 * thread), only the entries since it are read and applied to it; when `head`'s chain does
 * not pass through it (the thread was reset to a fork), the whole chain is read anew.
 */
export async function loadHistory(store: Store, head: Digest, known?: KnownHistory): Promise<ThreadHistory> {
  const entries: LogEntry[] = []
  let at: Digest | null = head
  while (at !== null && at !== known?.log) {
    const log = await readCheckpointLog(store, at)
    entries.push(log.entry)
    at = log.previous
  }
  const history = at !== null && known ? known.history.clone() : new ThreadHistory()
  for (let i = entries.length - 1; i >= 0; i--) history.apply(entries[i]!)
  return history
}

export async function readCheckpointLog(store: Store, digest: Digest): Promise<CheckpointLog> {
  const object = await store.readObject<CheckpointLog>(digest, 'checkpoint-log')
  const problem = logProblem(object)
  if (problem) throw new MalformedObjectError(`checkpoint log ${digest} is malformed: ${problem}`, { digest, entry: object.entry })
  return object
}

function logProblem(log: CheckpointLog): string | null {
  if (log.schemaVersion !== 1 || log.framework !== 'langgraph') return `it is schema ${String(log.schemaVersion)} of ${JSON.stringify(log.framework)}, not schema 1 of "langgraph"`
  if (log.previous !== null && !isDigest(log.previous)) return 'previous is not a digest'
  const entry: unknown = log.entry
  if (typeof entry !== 'object' || entry === null) return 'it has no entry'
  const e = entry as Record<string, unknown>
  if (typeof e['ns'] !== 'string' || typeof e['id'] !== 'string' || e['id'] === '') return 'its entry has no namespace or checkpoint id'
  if (e['op'] === 'put') {
    if (e['parent'] !== null && typeof e['parent'] !== 'string') return 'its parent is not a checkpoint id'
    if (!isTyped(e['checkpoint']) || !isTyped(e['metadata'])) return 'its checkpoint or metadata is not a typed blob'
    return Array.isArray(e['values']) && e['values'].every(isChannelValue) ? null : 'a channel value is not {channel, version, value}'
  }
  if (e['op'] === 'writes') {
    const writes = e['writes']
    if (typeof e['taskId'] !== 'string' || typeof e['taskPath'] !== 'string' || !Array.isArray(writes)) return 'its writes have no task'
    return writes.every(isWrite) ? null : 'a write is not {idx, channel, value}'
  }
  return `unknown op ${JSON.stringify(e['op'])}`
}

function isWrite(value: unknown): boolean {
  const w = value as Record<string, unknown> | null
  return typeof w === 'object' && w !== null && Number.isInteger(w['idx']) && typeof w['channel'] === 'string' && isTyped(w['value'])
}

function isChannelValue(value: unknown): boolean {
  const v = value as Record<string, unknown> | null
  const version = v?.['version']
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v['channel'] === 'string' &&
    (typeof version === 'string' || Number.isFinite(version)) &&
    (v['value'] === null || isTyped(v['value']))
  )
}

function isTyped(value: unknown): value is Typed {
  const typed = value as Partial<Typed> | null
  return typeof typed === 'object' && typed !== null && typeof typed.type === 'string' && isDigest(typed.blob)
}
