import { z } from 'zod'

/**
 * A call's arguments and a tool's result are stored as canonical JSON *text* inside their
 * objects, not as nested JSON: a `sha256:…` string an agent passed or got back is data,
 * and must never look like a reference to the store's graph walk (gc, verify). A ledger
 * entry names them (`argsHash`, `resultHash`).
 */
export const EffectArgsSchema = z.object({ kind: z.literal('effect-args'), schemaVersion: z.literal(1), tool: z.string(), args: z.string() })
export type EffectArgs = z.infer<typeof EffectArgsSchema>

export const EffectResultSchema = z.object({ kind: z.literal('effect-result'), schemaVersion: z.literal(1), value: z.string() })
export type EffectResult = z.infer<typeof EffectResultSchema>

/** The JSON text an `effect-args` or `effect-result` object holds, or null when it is not one of the `kind` asked for. */
export function effectPayloadText(object: unknown, kind: 'effect-args' | 'effect-result'): string | null {
  if (kind === 'effect-args') {
    const parsed = EffectArgsSchema.safeParse(object)
    return parsed.success ? parsed.data.args : null
  }
  const parsed = EffectResultSchema.safeParse(object)
  return parsed.success ? parsed.data.value : null
}
