import { z } from 'zod'
import { UsageError } from '../errors/index.js'

/** A snapshot argument, as operations and views take it. */
export const snapshotId = z.string().min(1).describe('a snapshot id, short id, head or tag, optionally followed by ~N or ^ (HEAD~1, main^)')

/** Arguments not yet checked against an operation's or a view's schema. @throws {UsageError} naming every argument the schema refuses */
export function checkArgs(name: string, input: z.ZodRawShape, raw: unknown): unknown {
  const parsed = z
    .object(input)
    .strict()
    .safeParse(raw ?? {})
  if (!parsed.success) throw new UsageError(`${name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`, { field: name })
  return parsed.data
}
