import { createHmac, timingSafeEqual } from 'node:crypto'
import type { z } from 'zod'
import { InvalidJobError, UsageError } from '../errors/index.js'
import { canonicalJson } from '../util/canonicalJson.js'
import type { FanoutJobData, FanoutJobResult } from './FanoutJob.js'
import { signedJobSchema } from './jobSchema.js'

/** The shortest shared key accepted: 128 bits. */
const MIN_KEY_BYTES = 16
/** A signed job older than this is refused: a copy of one cannot be queued again for ever. */
const MAX_JOB_AGE_MS = 24 * 3600 * 1000

export type SignedJobData = FanoutJobData & { signature: string }
export type SignedJobResult = FanoutJobResult & { signature: string }

/** The key the submitter and the workers share, as bytes. @throws {UsageError} none, or shorter than 16 bytes */
export function queueKey(key: string | Buffer | undefined): Buffer {
  const bytes = typeof key === 'string' ? Buffer.from(key.trim()) : key
  if (!bytes || bytes.length < MIN_KEY_BYTES)
    throw new UsageError(`a queue needs the key its submitters and workers share, at least ${MIN_KEY_BYTES} bytes: --queue-key-file FILE or FORKPOINT_QUEUE_KEY`, {
      option: 'queue-key-file',
    })
  return bytes
}

/** The HMAC-SHA256 of what a job or a result says, bound to its job id: the same data under another id is another signature. */
function mac(key: Buffer, kind: 'job' | 'result', jobId: string, body: object): string {
  return createHmac('sha256', key)
    .update(canonicalJson({ kind, job: jobId, body: JSON.parse(JSON.stringify(body)) as unknown }))
    .digest('hex')
}

function macMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'hex')
  const b = Buffer.from(given, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}

export function signJob(key: Buffer, jobId: string, data: FanoutJobData): SignedJobData {
  return { ...data, signature: mac(key, 'job', jobId, data) }
}

/**
 * A job's data as a worker may use it: every field within its schema, signed with the
 * queue's key for this job id, not older than a day, and sandboxed unless the worker
 * allows otherwise.
 * @throws {InvalidJobError} naming what is wrong; nothing of the job was used
 */
export function verifyJob(
  key: Buffer,
  jobId: string | undefined,
  raw: unknown,
  { allowUnsandboxed, now = Date.now() }: { allowUnsandboxed: boolean; now?: number },
): FanoutJobData {
  const id = jobId ?? ''
  const refuse = (reason: string): never => {
    throw new InvalidJobError(`job ${printable(id)} refused: ${reason}; nothing of it ran`, { job: printable(id), reason })
  }
  if (typeof raw !== 'object' || raw === null || !('signature' in raw)) return refuse('it is not signed (the submitter needs the queue key)')
  const parsed = signedJobSchema.safeParse(raw)
  if (!parsed.success) return refuse(describeIssues(parsed.error.issues))
  const { signature, ...data } = parsed.data
  if (!macMatches(mac(key, 'job', id, data), signature)) return refuse('its signature does not match (another key, or the job was altered)')
  if (now - Date.parse(data.createdAt) > MAX_JOB_AGE_MS) return refuse(`it was made at ${data.createdAt}, more than a day ago`)
  if (!data.isolate && !allowUnsandboxed) return refuse('it asks to run unsandboxed, and this worker was not started with --allow-unsandboxed')
  return data as FanoutJobData // the schema checked the digests' form
}

export function signResult(key: Buffer, jobId: string, result: FanoutJobResult): SignedJobResult {
  return { ...result, signature: mac(key, 'result', jobId, result) }
}

/** A worker's report as the submitter may believe it: signed with the queue's key for this job. @throws {InvalidJobError} */
export function verifyResult(key: Buffer, jobId: string, raw: SignedJobResult | FanoutJobResult): FanoutJobResult {
  const { signature, ...result } = raw as Partial<SignedJobResult> & FanoutJobResult
  if (typeof signature !== 'string' || !macMatches(mac(key, 'result', jobId, result), signature))
    throw new InvalidJobError(`the result of job ${printable(jobId)} is not signed with the queue key: ignored`, { job: printable(jobId), reason: 'unsigned result' })
  return result
}

/** What a job id looks like in a message: as it is when plain, else quoted (no control character from Redis reaches a terminal). */
function printable(id: string): string {
  return /^[\w.-]{1,128}$/.test(id) ? id : JSON.stringify(id.slice(0, 128))
}

function describeIssues(issues: z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 5)
    .map((i) => `${i.path.map((p) => printable(String(p))).join('.') || 'the job'}: ${i.message}`)
    .join('; ')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
}
