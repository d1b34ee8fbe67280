import { compareWritesSortKeys, writesSortKey } from '@langchain/langgraph-checkpoint'
import type { Digest } from '../../objects/digest.js'
import { type CheckpointLog, type LogEntry, type Typed, validateCheckpointLog } from '../../objects/CheckpointLog.js'
import type { Store } from '../../store/Store.js'

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
  return validateCheckpointLog(await store.readObject<CheckpointLog>(digest, 'checkpoint-log'), digest)
}
