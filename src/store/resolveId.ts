import { promises as fs } from 'node:fs'
import { AmbiguousIdError, ObjectNotFoundError, UsageError } from '../errors/index.js'
import { type Digest, isDigest } from './digest.js'
import { readRef } from './refs.js'
import type { Store } from './Store.js'

const HEX_PREFIX = /^(?:sha256:)?([0-9a-f]{4,64})$/

/**
 * Turn what a person types into an object id: a full digest, a hex prefix of at least 4
 * characters (git-style short id), `HEAD`, a head or tag name, a full ref name, any
 * of these followed by `~N` (the N-th first parent).
 */
export async function resolveId(store: Store, spec: string): Promise<Digest> {
  const tilde = /^(.+?)~(\d+)$/.exec(spec)
  if (tilde) return firstParent(store, await resolveId(store, tilde[1]!), Number(tilde[2]), spec)
  if (isDigest(spec)) {
    if (await store.has(spec)) return spec
    throw new ObjectNotFoundError(`no object ${spec} in this store`, { spec })
  }
  const byRef = await resolveRefName(store, spec)
  if (byRef) return byRef
  const hex = HEX_PREFIX.exec(spec.toLowerCase())
  if (hex) return resolvePrefix(store, hex[1]!, spec)
  throw new ObjectNotFoundError(`unknown id or ref: ${spec}`, { spec })
}

async function resolveRefName(store: Store, spec: string): Promise<Digest | null> {
  const candidates = spec === 'HEAD' ? ['HEAD'] : spec.startsWith('refs/') ? [spec] : [`refs/heads/${spec}`, `refs/tags/${spec}`]
  for (const name of candidates) {
    try {
      const id = await readRef(store, name)
      if (id) return id
    } catch (err) {
      if (!(err instanceof UsageError)) throw err // an invalid ref name is simply not a ref
    }
  }
  if (spec === 'HEAD') throw new ObjectNotFoundError('HEAD points at nothing yet: take a snapshot first', { spec })
  return null
}

async function resolvePrefix(store: Store, hex: string, spec: string): Promise<Digest> {
  const dir = store.path('objects', 'sha256', hex.slice(0, 2))
  const rest = hex.slice(2)
  const names = await fs.readdir(dir).catch(() => [] as string[])
  const loose = names.filter((n) => n.startsWith(rest)).map((n) => `sha256:${hex.slice(0, 2)}${n}` as Digest)
  const matches = [...new Set([...loose, ...store.packs.withPrefix(hex)])]
  if (matches.length === 1) return matches[0]!
  if (matches.length === 0) throw new ObjectNotFoundError(`unknown id or ref: ${spec}`, { spec })
  throw new AmbiguousIdError(`short id ${spec} is ambiguous: it matches ${matches.length} objects; give more characters`, {
    spec,
    matches: matches.slice(0, 10),
  })
}

async function firstParent(store: Store, id: Digest, n: number, spec: string): Promise<Digest> {
  let current = id
  for (let i = 0; i < n; i++) {
    const obj = await store.readObject(current)
    const parents = obj['parents']
    const parent: unknown = Array.isArray(parents) ? parents[0] : undefined
    if (!isDigest(parent)) throw new ObjectNotFoundError(`${spec}: history is only ${i} deep`, { spec })
    current = parent
  }
  return current
}
