import { MalformedObjectError } from '../errors/index.js'
import { type Digest, isDigest } from './digest.js'
import type { EdgeRule } from './edges.js'

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

/** A log names the step before it and the blobs of its values; its namespaces and ids are LangGraph's text. */
export const CHECKPOINT_LOG_EDGES: EdgeRule = { only: new Set(['previous', 'blob']) }

/** Check a parsed `checkpoint-log` object; MalformedObjectError (exit 5) when any part is off. */
export function validateCheckpointLog(log: CheckpointLog, digest: Digest): CheckpointLog {
  const problem = logProblem(log)
  if (problem) throw new MalformedObjectError(`checkpoint log ${digest} is malformed: ${problem}`, { digest, entry: log.entry })
  return log
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
