import { z } from 'zod'
import { previewValue } from '../util/previewValue.js'
import { REDACTION_MODES, RUN_ID_RULE, RUN_ID_WORDS, RUN_SCHEMA_VERSION, RUN_STATUSES, type Run, SEALED_PREFIX, STEP_TYPES, invalidRun } from './Run.js'

// The run's schemas, apart from its types and names (Run.ts), which the command line's start
// reads (the statuses and redaction modes of its flags) without loading zod.

const oneOf = (field: string, values: readonly string[]) => `${field} must be one of ${values.join(', ')}`
const NON_NEGATIVE_VERSION = 'schemaVersion must be a non-negative integer'

/** What a run is read by first: its kind and the version it was written in, which decides its migration. */
export const RunHeaderSchema = z.looseObject(
  {
    kind: z.literal('run', { error: (issue) => `kind is ${previewValue(issue.input)}, expected "run"` }),
    schemaVersion: z.int({ error: NON_NEGATIVE_VERSION }).nonnegative({ error: NON_NEGATIVE_VERSION }),
  },
  { error: 'expected a JSON object' },
)

const text = (field: string, what = 'a string') => z.string({ error: `${field} must be ${what}` })
const runId = (field: string, notText?: string) => {
  const notRunId = (issue: { input?: unknown }) => `${field} ${previewValue(issue.input)} is not a run id (${RUN_ID_WORDS})`
  return z.string({ error: notText ?? notRunId }).regex(RUN_ID_RULE, { error: notRunId })
}
const record = (field: string) => z.looseObject({}, { error: `${field} must be an object` })

// A step's messages follow `step <idx> ` (validateRun puts it before them).
const PAYLOADS_NEEDED = 'needs input and output (null when there is none)'
const ERROR_SHAPE = 'error must be {name, message}'
const DURATION = 'durationMs must be a number >= 0'
const StepErrorSchema = z.looseObject({ message: z.string({ error: ERROR_SHAPE }) }, { error: ERROR_SHAPE })

/**
 * One step of a run whose payloads are kept in the clear (`secrets` or `content`). Its
 * `inputHash` and `outputHash` are any value: the reader computes a missing or malformed
 * one, and checks them against the payloads where asked. Its `idx`, its place in the list,
 * is checked by validateRun. Unknown fields are kept.
 */
export const StepSchema = z.looseObject(
  {
    name: z.string({ error: 'needs a non-empty name' }).min(1, { error: 'needs a non-empty name' }),
    type: z.enum(STEP_TYPES, { error: (issue) => `type ${previewValue(issue.input)} is not one of ${STEP_TYPES.join(', ')}` }),
    input: z.unknown().nonoptional({ error: PAYLOADS_NEEDED }),
    output: z.unknown().nonoptional({ error: PAYLOADS_NEEDED }),
    startedAt: text('startedAt', 'an ISO date string'),
    durationMs: z.number({ error: DURATION }).nonnegative({ error: DURATION }),
    meta: record('meta').optional(),
    error: StepErrorSchema.nullish(),
  },
  { error: 'is not an object' },
)

const UNSEALED = 'of an encrypted run holds unencrypted payloads'
const HASHES_NEEDED = 'of an encrypted run needs inputHash and outputHash'
const sealedPayload = z.string({ error: (issue) => (issue.input === undefined ? PAYLOADS_NEEDED : UNSEALED) }).startsWith(SEALED_PREFIX, { error: UNSEALED })

/** One step of an encrypted run: its payloads sealed, its error too or in the clear, its keyed hashes stored (none can be computed without the key). */
export const SealedStepSchema = z.looseObject(
  {
    ...StepSchema.shape,
    error: z.union([StepErrorSchema, z.string({ error: ERROR_SHAPE }).startsWith(SEALED_PREFIX, { error: ERROR_SHAPE })], { error: ERROR_SHAPE }).nullish(),
    input: sealedPayload,
    output: sealedPayload,
    inputHash: z.string({ error: HASHES_NEEDED }),
    outputHash: z.string({ error: HASHES_NEEDED }),
  },
  { error: 'is not an object' },
)

const envelope = {
  ...RunHeaderSchema.shape,
  schemaVersion: z.literal(RUN_SCHEMA_VERSION, { error: `schemaVersion must be ${RUN_SCHEMA_VERSION} (older versions are migrated on read)` }),
  runId: runId('runId', 'runId must be a string'),
  entrypoint: text('entrypoint'),
  startedAt: text('startedAt'),
  endedAt: text('endedAt'),
  parent: runId('parent').optional(),
  status: z.enum(RUN_STATUSES, { error: oneOf('status', RUN_STATUSES) }),
}

// A run's own fields; its steps are checked one by one (validateRun).
const steps = z.array(z.unknown(), { error: 'steps must be an array' })

/** A run whose payloads are in the clear (`secrets` or `content` redaction), in the current schema version, but for its steps (StepSchema). Unknown fields are kept. */
export const PlainRunSchema = z.looseObject(
  {
    ...envelope,
    redaction: z.enum(['secrets', 'content'], { error: oneOf('redaction', REDACTION_MODES) }),
    meta: record('meta'),
    steps,
  },
  { error: 'expected a JSON object' },
)

const NEEDS_KEY_CHECK = 'an encrypted run needs encryption.keyCheck'

/** A run recorded with `encrypt` redaction, but for its steps (SealedStepSchema): it holds the key check its reader tells a wrong key by. */
export const EncryptedRunSchema = z.looseObject(
  {
    ...envelope,
    redaction: z.literal('encrypt'),
    meta: record('meta'),
    encryption: z.looseObject({ keyCheck: z.string({ error: NEEDS_KEY_CHECK }) }, { error: NEEDS_KEY_CHECK }),
    steps,
  },
  { error: 'expected a JSON object' },
)

/** The parsed object as a run's header, unchanged; RunArtifactError (exit 5) when it is not one. */
export function validateRunHeader(value: unknown, where: string): z.infer<typeof RunHeaderSchema> {
  return checkRun(RunHeaderSchema, value, where)
}

/**
 * The parsed object as a run of the current schema version, unchanged (not migrated, no
 * hash computed: parseRun does both); RunArtifactError (exit 5) naming the first problem,
 * a step's as `step <idx> …`. The steps are checked one at a time, each against its place
 * in the list, up to the first that fails: a zod array of them would list the problems of
 * every step, and ten million malformed steps (a 20 MB artifact) take more memory than the
 * process has.
 */
export function validateRun(value: unknown, where: string): Run {
  const encrypted = (value as { redaction?: unknown } | null)?.redaction === 'encrypt'
  const schema: z.ZodType<{ steps: unknown[] }> = encrypted ? EncryptedRunSchema : PlainRunSchema
  const stepSchema = encrypted ? SealedStepSchema : StepSchema
  const { steps } = checkRun(schema, value, where)
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]
    if (isObject(step) && step['idx'] !== i) throw invalidRun(where, `step ${i} has idx ${previewValue(step['idx'])}; steps must be numbered 0, 1, 2… in order`)
    const parsed = stepSchema.safeParse(step)
    if (!parsed.success) throw invalidRun(where, `step ${i} ${firstProblem(parsed.error)}`)
  }
  return value as Run
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function checkRun<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw invalidRun(where, firstProblem(parsed.error))
  return value as T
}

/** The message of the first problem: each names its field, as a run's fields and a step's are few. */
function firstProblem(error: z.ZodError): string {
  return error.issues[0]?.message ?? 'unknown problem'
}
