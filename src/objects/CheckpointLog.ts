import { z } from 'zod'
import { checkObject } from './checkObject.js'
import type { Digest } from './digest.js'
import { DigestSchema } from './digestSchema.js'
import type { EdgeRule } from './edges.js'

/** A value as the saver's serializer wrote it: its type tag and the blob of its bytes. */
const TypedSchema = z.object({ type: z.string(), blob: DigestSchema })
export type Typed = z.infer<typeof TypedSchema>

const ChannelValueSchema = z.object({ channel: z.string(), version: z.union([z.number(), z.string()]), value: TypedSchema.nullable() })
export type ChannelValue = z.infer<typeof ChannelValueSchema>

/** Where a step belongs: LangGraph's namespace and the checkpoint's id. */
const StepPlace = { ns: z.string(), id: z.string().min(1) }

const PutEntrySchema = z.object({
  op: z.literal('put'),
  ...StepPlace,
  /** The checkpoint this one was made from (LangGraph's parent), null for a thread's first. */
  parent: z.string().nullable(),
  /** The checkpoint without its channel values: those are in `values` and earlier puts', by channel and version. */
  checkpoint: TypedSchema,
  metadata: TypedSchema,
  /** The channels this checkpoint gave new versions: each one's value at its new version (null: the channel is empty). */
  values: z.array(ChannelValueSchema),
})
export type PutEntry = z.infer<typeof PutEntrySchema>

const WritesEntrySchema = z.object({
  op: z.literal('writes'),
  /** `id`: the checkpoint the writes belong to. */
  ...StepPlace,
  taskId: z.string(),
  taskPath: z.string(),
  /** `idx`: the write's place in its task's list, or LangGraph's negative index of a special channel (errors, interrupts). */
  writes: z.array(z.object({ idx: z.int(), channel: z.string(), value: TypedSchema })),
})
export type WritesEntry = z.infer<typeof WritesEntrySchema>

const LogEntrySchema = z.discriminatedUnion('op', [PutEntrySchema, WritesEntrySchema])
export type LogEntry = z.infer<typeof LogEntrySchema>

/**
 * One step of a thread's history, chained to the one before: the `checkpoints` layer of a
 * thread's image names the newest. A put or a task's writes adds one small object, so a
 * thread of n steps costs n objects, and every image of the thread shares its history's prefix.
 */
export const CheckpointLogSchema = z.object({
  kind: z.literal('checkpoint-log'),
  schemaVersion: z.literal(1),
  framework: z.literal('langgraph'),
  previous: DigestSchema.nullable(),
  entry: LogEntrySchema,
})
export type CheckpointLog = z.infer<typeof CheckpointLogSchema>

/** A log names the step before it and the blobs of its values; its namespaces and ids are LangGraph's text. */
export const CHECKPOINT_LOG_EDGES: EdgeRule = { only: new Set(['previous', 'blob']) }

/** The parsed object as a `checkpoint-log`, unchanged; MalformedObjectError (exit 5) when any part is off. */
export function validateCheckpointLog(value: unknown, digest: Digest): CheckpointLog {
  return checkObject(CheckpointLogSchema, value, `checkpoint log ${digest}`, 'checkpoint log', { digest })
}
