import { promises as fs } from 'node:fs'
import { AmbiguousIdError, ObjectNotFoundError, UsageError } from '../errors/index.js'
import { type Digest, isDigest, shortId } from '../objects/digest.js'
import { readRef } from './refs.js'
import type { Store } from './Store.js'
import { counted } from '../util/plural.js'

const HEX_PREFIX = /^(?:sha256:)?([0-9a-f]{4,64})$/
/** Ancestry steps after a name (which never holds `~` or `^`): `~N` (N first parents back), `^N` (the N-th parent); a bare `~` or `^` is 1. */
const STEPS = /^(?:[~^]\d*)+$/

/**
 * Turn what a person types into an object id: a full digest, a hex prefix of at least 4
 * characters (git-style short id), `HEAD`, a head or tag name, a full ref name, any
 * of these followed by git's ancestry steps in any number: `~N` (N first parents back) and
 * `^N` (the N-th parent; `^` is the first), as in `HEAD~2`, `main^`, `main~2^`, `HEAD^^`.
 * @throws {ObjectNotFoundError} (exit 2) for a name that is nothing here, or a step past the first snapshot
 */
export async function resolveId(store: Store, spec: string): Promise<Digest> {
  const at = spec.search(/[~^]/)
  const steps = spec.slice(at)
  if (at <= 0 || !STEPS.test(steps)) return resolveName(store, spec)
  let id = await resolveName(store, spec.slice(0, at))
  for (const [, op, count] of steps.matchAll(/([~^])(\d*)/g)) {
    const n = count === '' ? 1 : Number(count)
    id = op === '~' ? await firstParentBack(store, id, n, spec) : await nthParent(store, id, n, spec)
  }
  return id
}

async function resolveName(store: Store, spec: string): Promise<Digest> {
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

async function firstParentBack(store: Store, id: Digest, n: number, spec: string): Promise<Digest> {
  let current = id
  for (let i = 0; i < n; i++) current = await parentOf(store, current, 1, spec, () => `its history has only ${counted(i, 'snapshot')} before it`)
  return current
}

async function nthParent(store: Store, id: Digest, n: number, spec: string): Promise<Digest> {
  if (n === 0) return id
  return parentOf(store, id, n, spec, (count) => `${shortId(id)} has ${count === 0 ? 'no parent' : `only ${counted(count, 'parent')}`}`)
}

/** The `n`-th parent (from 1) of a snapshot, or ObjectNotFoundError (exit 2) saying why `spec` goes past the history. */
async function parentOf(store: Store, id: Digest, n: number, spec: string, why: (parents: number) => string): Promise<Digest> {
  const parents = (await store.readObject(id))['parents']
  const list: unknown[] = Array.isArray(parents) ? parents : []
  const parent = list[n - 1]
  if (isDigest(parent)) return parent
  throw new ObjectNotFoundError(`${spec} goes past the first snapshot: ${why(list.length)}`, { spec })
}
