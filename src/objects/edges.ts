import { type Digest, isDigest } from './digest.js'

/**
 * Where a kind's objects name other objects. Every kind also holds its users' text beside
 * its references (a file's name, a link's target, a snapshot's message or env, an
 * idempotency key, a LangGraph namespace), and any of it may read `sha256:<hex>` and still
 * name nothing. `only`: a string is an edge only under one of these keys. `skip`: never
 * under these keys (the rest stays generic, so that layers a newer writer adds are kept
 * alive). A kind without a rule is generic: each digest-shaped string in it is an edge.
 */
export type EdgeRule = { readonly only: ReadonlySet<string> } | { readonly skip: ReadonlySet<string> }

/** The digests in `value` under `rule`; `counts`: whether a string here, under its nearest key, can be an edge. */
export function digestsIn(value: unknown, rule: EdgeRule | undefined, counts: boolean, out: Digest[]): Digest[] {
  if (typeof value === 'string') {
    if (counts && isDigest(value)) out.push(value)
  } else if (Array.isArray(value)) {
    for (const item of value) digestsIn(item, rule, counts, out)
  } else if (typeof value === 'object' && value !== null) {
    const fields = value as Record<string, unknown>
    for (const key in fields) {
      const item = fields[key]
      if (rule === undefined) digestsIn(item, rule, true, out)
      else if ('only' in rule) digestsIn(item, rule, rule.only.has(key), out)
      else if (!rule.skip.has(key)) digestsIn(item, rule, true, out)
    }
  }
  return out
}
