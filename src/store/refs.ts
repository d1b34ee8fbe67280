import { promises as fs } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { RefConflictError, UsageError } from '../errors/index.js'
import { atomicWrite, atomicWriteSync } from '../util/atomicWrite.js'
import { readStateTextOrNull } from './readStateFile.js'
import { type Digest, assertDigest, isDigest } from '../objects/digest.js'
import { acquireLock } from './lockFile.js'
import { appendReflog } from './reflog.js'
import type { Store } from './Store.js'

/** What HEAD holds: a branch it follows, or a snapshot id directly (detached). */
export type Head = { type: 'symbolic'; ref: string } | { type: 'detached'; id: Digest }

const REF_COMPONENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/
/** A ref component is a file name, 255 bytes at most, and its temp files add about 30 bytes to it (`refComponent` makes up to 201). */
const MAX_REF_COMPONENT = 210
/** A ref's whole name, far below a path the file system refuses (4096 bytes with the store's). */
const MAX_REF_NAME = 1024

/** Refuse (UsageError, exit 2) names that could escape `refs/`, collide with lock and temp files, or be too long for a file name. */
export function assertRefName(name: string): string {
  const parts = name.split('/')
  const ok = (name === 'HEAD' || parts[0] === 'refs') && parts.every((p) => REF_COMPONENT.test(p) && !p.endsWith('.lock') && !p.includes('..'))
  if (!ok) throw new UsageError(`invalid ref name: ${JSON.stringify(name.slice(0, 200))}`, { name })
  if (name.length > MAX_REF_NAME || parts.some((p) => p.length > MAX_REF_COMPONENT)) {
    throw new UsageError(
      `invalid ref name: ${JSON.stringify(`${name.slice(0, 60)}...`)} is too long (each part at most ${MAX_REF_COMPONENT} characters, the whole at most ${MAX_REF_NAME})`,
      { name },
    )
  }
  return name
}

/** A head (a named line of snapshots HEAD can follow; never a live branch): `main` -> `refs/heads/main`; full names pass through. */
export function headRef(name: string): string {
  return assertRefName(name.startsWith('refs/') ? name : `refs/heads/${name}`)
}

/**
 * A tag: `v1` -> `refs/tags/v1`; a full name only under `refs/tags/`, so a tag never moves
 * or deletes a head or what a live machine, branch or run keeps from gc.
 * @throws {UsageError} a name that is no tag's
 */
export function tagRef(name: string): string {
  if (name.startsWith('refs/') && !name.startsWith('refs/tags/'))
    throw new UsageError(`invalid tag name: ${JSON.stringify(name.slice(0, 200))} names a ref outside refs/tags/`, { name })
  return assertRefName(name.startsWith('refs/') ? name : `refs/tags/${name}`)
}

export async function readHead(store: Store): Promise<Head> {
  const text = (readStateTextOrNull(store.path('HEAD')) ?? 'ref: refs/heads/main').trim()
  if (text.startsWith('ref: ')) return { type: 'symbolic', ref: assertRefName(text.slice(5)) }
  return { type: 'detached', id: assertDigest(text, 'HEAD') }
}

/** The id a ref points at, or null when the ref does not exist. HEAD is followed. */
export async function readRef(store: Store, name: string): Promise<Digest | null> {
  if (name === 'HEAD') {
    const head = await readHead(store)
    return head.type === 'detached' ? head.id : readRef(store, head.ref)
  }
  const text = readStateTextOrNull(store.path(assertRefName(name)))
  return text === null ? null : assertDigest(text.trim(), `ref ${name}`)
}

/** The ref a write to HEAD really moves: the followed branch, or HEAD itself when detached. */
export async function headTarget(store: Store): Promise<string> {
  const head = await readHead(store)
  return head.type === 'symbolic' ? head.ref : 'HEAD'
}

export interface UpdateRefArgs {
  store: Store
  name: string
  id: Digest
  /** Compare-and-swap: the id the ref must hold now (null = must not exist). Omit to skip the check. */
  expected?: Digest | null
  message: string
}

/** Move a ref under its lock, with an optional compare-and-swap, and log the move. */
export async function updateRef({ store, name, id, expected, message }: UpdateRefArgs): Promise<void> {
  assertDigest(id)
  const refName = name === 'HEAD' ? await headTarget(store) : assertRefName(name)
  const path = store.path(refName)
  const lock = await acquireLock(`${path}.lock`, { what: `ref ${refName}` }) // makes the ref's directory
  try {
    const old = await readRef(store, refName)
    if (expected !== undefined && old !== expected) {
      throw new RefConflictError(`ref ${refName} moved to ${old ?? 'nothing'} (expected ${expected ?? 'nothing'}); try again`, {
        ref: refName,
        actual: old,
        expected,
      })
    }
    atomicWriteSync(path, [Buffer.from(`${id}\n`)], { fsync: true })
    await appendReflog(store, refName, { old, new: id, message })
    // moved through HEAD, HEAD points at it: no second read of HEAD
    if (refName !== 'HEAD' && (name === 'HEAD' || (await headTarget(store)) === refName)) {
      await appendReflog(store, 'HEAD', { old, new: id, message })
    }
  } finally {
    await lock.release()
  }
}

/** Point HEAD at a branch (symbolic) or a snapshot id (detached). */
export async function setHead(store: Store, head: Head, message = 'checkout'): Promise<void> {
  const old = await readRef(store, 'HEAD')
  const text = head.type === 'symbolic' ? `ref: ${assertRefName(head.ref)}\n` : `${assertDigest(head.id)}\n`
  await atomicWrite(store.path('HEAD'), text, { fsync: true })
  const now = await readRef(store, 'HEAD')
  if (now) await appendReflog(store, 'HEAD', { old, new: now, message })
}

export async function deleteRef(store: Store, name: string): Promise<boolean> {
  const path = store.path(assertRefName(name))
  const lock = await acquireLock(`${path}.lock`, { what: `ref ${name}` })
  try {
    const old = await readRef(store, name)
    if (old === null) return false
    await fs.rm(path)
    return true
  } finally {
    await lock.release()
  }
}

/** Every ref under `prefix` (default all), sorted by name. */
export async function listRefs(store: Store, prefix = 'refs/'): Promise<Array<{ name: string; id: Digest }>> {
  const out: Array<{ name: string; id: Digest }> = []
  const walk = async (dir: string): Promise<void> => {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
    for (const e of entries) {
      const full = join(dir, e.name)
      if (e.isDirectory()) await walk(full)
      else if (e.isFile() && !e.name.endsWith('.lock') && !e.name.startsWith('.')) {
        const name = relative(store.root, full).split(sep).join('/')
        const text = readStateTextOrNull(full)?.trim()
        if (name.startsWith(prefix) && isDigest(text)) out.push({ name, id: text })
      }
    }
  }
  // only the directory the prefix names is walked: a store's other refs (runs, forks) can be thousands
  const dir = prefix.split('/').slice(0, -1)
  await walk(store.path(...(dir[0] === 'refs' ? dir : ['refs'])))
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
