import { z } from 'zod'
import { UsageError } from '../errors/index.js'

/** Arguments not yet checked against an operation's schema. @throws {UsageError} naming every argument the schema refuses */
export function checkArgs(name: string, input: z.ZodRawShape, raw: unknown): Record<string, unknown> {
  const parsed = z
    .object(input)
    .strict()
    .safeParse(raw ?? {})
  if (!parsed.success) throw new UsageError(`${name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`, { field: name })
  return parsed.data
}
