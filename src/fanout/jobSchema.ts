import { z } from 'zod'
import { EFFECT_CLASSES } from '../objects/Ledger.js'

/** The longest string a job may carry in one field (a command line, an environment value). */
const MAX_TEXT = 64 * 1024
/** A remote names a registry and an image: a URL's length is plenty. */
const MAX_REMOTE = 2048

const text = z.string().max(MAX_TEXT)
const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'a sha256 digest')
const remote = z.string().min(1).max(MAX_REMOTE)
const commandLine = z.union([text.min(1), z.array(text).min(1).max(1024)])

const candidate = z
  .object({
    cmd: commandLine,
    score: commandLine.optional(),
    net: z.enum(['none', 'host']).optional(),
    env: z
      .record(z.string().min(1).max(256), text)
      .refine((env) => Object.keys(env).length <= 256, 'at most 256 variables')
      .optional(),
    memory: z.union([z.number().int().positive(), z.string().max(32)]).optional(),
    pids: z.number().int().positive().max(1_000_000).optional(),
    cpu: z.number().positive().max(1e9).optional(),
  })
  .strict()

const httpPolicy = z
  .object({
    rules: z.array(z.object({ host: z.string().min(1).max(512), method: z.string().max(32), path: z.string().max(2048), class: z.enum(EFFECT_CLASSES) }).strict()).max(1000),
    default: z.enum(EFFECT_CLASSES),
  })
  .strict()

/** Every field of a job as a worker accepts it, each bounded: anything else is refused before any of it is used. */
export const fanoutJobSchema = z
  .object({
    group: z.string().regex(/^[0-9a-f]{16}$/, '16 hex digits'),
    index: z.number().int().min(0).max(1_000_000),
    base: z.object({ id: digest, remote }).strict(),
    registry: remote,
    candidate,
    timeoutMs: z
      .number()
      .int()
      .positive()
      .max(7 * 24 * 3600 * 1000)
      .nullable(),
    isolate: z.boolean(),
    httpPolicy: httpPolicy.nullable(),
    createdAt: z.iso.datetime(),
  })
  .strict()

/** A job as it travels: its data and the submitter's HMAC over the job id and the data. */
export const signedJobSchema = fanoutJobSchema.extend({ signature: z.string().regex(/^[0-9a-f]{64}$/, 'an HMAC-SHA256 in hex') }).strict()
