import { randomBytes } from 'node:crypto'
import { RunArtifactError } from '../errors/index.js'
import type { EdgeRule } from './edges.js'

/** The run artifact schema this version writes; older ones are migrated on read. */
export const RUN_SCHEMA_VERSION = 1

export const STEP_TYPES = ['llm', 'tool', 'step', 'input', 'output'] as const
export type StepType = (typeof STEP_TYPES)[number]

/** How a run's payloads are kept: secrets dropped, content hashed, or encrypted. */
export const REDACTION_MODES = ['secrets', 'content', 'encrypt'] as const
export type RedactionMode = (typeof REDACTION_MODES)[number]

/** A JSON value as recorded: what canonical JSON can hold. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A step's failure as recorded. */
export interface StepError {
  name: string
  message: string
  code?: string
}

/**
 * One recorded call. `inputHash`/`outputHash` are hex sha256 of the NFC-normalised
 * canonical JSON (keyed HMAC for encrypted runs); `(name, inputHash)` is the step's
 * signature for replay matching and diff resync. In an encrypted run `input`, `output`
 * and `error` are sealed strings (see payloadCipher).
 */
export interface Step {
  idx: number
  name: string
  type: StepType
  input: JsonValue
  output: JsonValue
  error?: StepError | string
  inputHash: string
  outputHash: string
  startedAt: string
  durationMs: number
  meta?: { [key: string]: JsonValue }
  [unknown: string]: unknown
}

export const RUN_STATUSES = ['ok', 'failed', 'running'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]

export interface EncryptionInfo {
  alg: 'aes-256-gcm'
  kdf: 'raw' | 'scrypt'
  /** HMAC of a fixed label under the key: tells a wrong key from tampered data. */
  keyCheck: string
}

/** A recorded agent run: the `*.run.json` artifact and the store's `run` object. */
export interface Run {
  kind: 'run'
  schemaVersion: number
  runId: string
  entrypoint: string
  startedAt: string
  endedAt: string
  status: RunStatus
  steps: Step[]
  redaction: RedactionMode
  encryption?: EncryptionInfo
  parent?: string
  meta: { [key: string]: JsonValue }
  [unknown: string]: unknown
}

/** What a run artifact's `runId` (and `parent`) may be: 1–128 letters, digits, `.`, `_`, `:` and `-` (`run-…`, uuids, `test-run-001`). */
export const RUN_ID_RULE = /^[A-Za-z0-9._:-]{1,128}$/
export const RUN_ID_WORDS = "1 to 128 letters, digits, '.', '_', ':' or '-'"

/** Whether `value` is a run id a run artifact may carry. */
export function isRunId(value: unknown): value is string {
  return typeof value === 'string' && RUN_ID_RULE.test(value)
}

/** What a payload sealed by payloadCipher starts with (iv, tag and ciphertext follow, base64url, dot-separated). */
export const SEALED_PREFIX = 'fpenc:v1:'

/** Whether `value` is a sealed payload of an encrypted run. */
export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(SEALED_PREFIX)
}

/** A run artifact that is not one: RunArtifactError (exit 5) naming where and the problem. */
export function invalidRun(where: string, problem: string): RunArtifactError {
  return new RunArtifactError(`${where} is not a valid run: ${problem}`, { where, problem })
}

/** Run ids sort by time: `run-` + 12 hex of milliseconds + 8 random hex. */
export function makeRunId(now = Date.now()): string {
  return `run-${now.toString(16).padStart(12, '0')}${randomBytes(4).toString('hex')}`
}

/** A run is recorded data all through: a digest in it is what the agent saw, never a reference. */
export const RUN_EDGES: EdgeRule = { only: new Set() }
