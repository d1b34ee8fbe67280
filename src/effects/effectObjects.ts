import { LedgerTamperedError, UsageError, isForkpointError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { type EffectArgs, type EffectResult, effectPayloadText } from '../objects/EffectPayload.js'
import type { Store } from '../store/Store.js'
import { canonicalJson } from '../util/canonicalJson.js'

/** Store a call's arguments; the digest is the entry's `argsHash` (it names the tool, so one key on two tools never matches). */
export function writeArgs(store: Store, tool: string, args: unknown): Promise<Digest> {
  return store.writeObject({ kind: 'effect-args', schemaVersion: 1, tool, args: jsonText(args, `the arguments of tool ${tool}`) } satisfies EffectArgs)
}

export function readArgs(store: Store, digest: Digest, where: string): Promise<unknown> {
  return readPayload(store, digest, 'effect-args', where)
}

/** Store a tool's result in its recorded form; the digest is the entry's `resultHash`. */
export function writeResult(store: Store, value: string): Promise<Digest> {
  return store.writeObject({ kind: 'effect-result', schemaVersion: 1, value } satisfies EffectResult)
}

export function readResult(store: Store, digest: Digest, where: string): Promise<unknown> {
  return readPayload(store, digest, 'effect-result', where)
}

/** A tool's result as recorded (undefined becomes null), and what the agent gets back: the same on the first call as on every replayed one. */
export function recordedForm(tool: string, value: unknown): { text: string; value: unknown } {
  const text = jsonText(value, `the result of tool ${tool}`)
  return { text, value: JSON.parse(text) as unknown }
}

/** JSON as JSON.stringify sees it (toJSON honoured: a Date is its ISO string), in canonical form. */
function jsonText(value: unknown, what: string): string {
  try {
    return canonicalJson(JSON.parse(JSON.stringify(value) ?? 'null'))
  } catch (err) {
    throw new UsageError(`${what} must be JSON values: ${(err as Error).message}`, {}, { cause: err })
  }
}

/** The JSON an entry's object holds; LedgerTamperedError when it is absent, corrupt, of another kind or not JSON. */
async function readPayload(store: Store, digest: Digest, kind: 'effect-args' | 'effect-result', where: string): Promise<unknown> {
  const bad = (why: string, cause?: unknown) =>
    new LedgerTamperedError(`${where} names ${digest}, which is not a valid ${kind} object: ${why}`, { ledger: where, reason: 'reference', digest }, { cause })
  let object: EffectArgs | EffectResult
  try {
    object = await store.readObject<EffectArgs | EffectResult>(digest, kind)
  } catch (err) {
    if (isForkpointError(err)) throw bad(err.message, err)
    throw err
  }
  const text = effectPayloadText(object, kind)
  if (text === null) throw bad('it holds no JSON text')
  try {
    return JSON.parse(text) as unknown
  } catch (err) {
    throw bad('its JSON text does not parse', err)
  }
}
