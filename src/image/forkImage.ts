import { readdir } from 'node:fs/promises'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { UsageError } from '../errors/index.js'
import { type Digest, shortId } from '../store/digest.js'
import { createRefs } from '../store/createRefs.js'
import { acquireLock } from '../store/lockFile.js'
import { resolveId } from '../store/resolveId.js'
import { withWriteLock } from '../store/storeLock.js'
import type { Store } from '../store/Store.js'
import { forkRefPrefix } from './forkBranch.js'
import { incomingImage } from './incomingImage.js'
import { materializeChildren } from './materializeFork.js'
import { ensureBaseView } from '../branch/baseView.js'
import type { Snapshot } from '../world/Snapshot.js'

/** Most children one fork makes: each is an object and a ref. */
const MAX_FORK_CHILDREN = 10_000

export interface ForkChild {
  index: number
  id: Digest
  ref: string
  /** With `materialize`: the child's live copy-on-write branch, its files the image's world. */
  branch?: { name: string; path: string }
}

export interface ForkImageArgs extends StoreLocator {
  id: string
  n: number
  /** Also make each child a copy-on-write branch holding the image's world (`forkBranchName`). */
  materialize?: boolean
  /** With `materialize`: branches that outlive this process until committed or aborted (the CLI's); else they end with it, as `Workspace.branch`'s do. */
  persistent?: boolean
  now?: () => Date
}

/**
 * Make `n` children of an image: each a snapshot of its own whose only parent is the image
 * and whose layers are the image's (nothing is copied but one small object), with
 * `meta.fork` saying which child it is, kept by `refs/forks/<short id>/<index>`. A second
 * fork of the same image numbers on from the first. Each child is then an image like any
 * other: snapshot on top of it, diff it, merge it. With `materialize`, each also gets a
 * branch (made after the children: a branch that cannot be made aborts those made, and the
 * children stay, as images).
 * @throws {UsageError} when `n` is not a whole number from 1 to MAX_FORK_CHILDREN
 * @throws {BackendUnavailableError} `materialize` where no branch backend works
 * @throws {MalformedObjectError} @throws {LedgerTamperedError} a hostile image (exit 5): nothing is made
 */
export async function forkImage({ id, n, materialize = false, persistent = false, now = () => new Date(), ...locator }: ForkImageArgs): Promise<ForkChild[]> {
  const { store, workspace } = await openStore(locator)
  if (!Number.isInteger(n) || n < 1 || n > MAX_FORK_CHILDREN) throw new UsageError(`fork: -n must be a whole number from 1 to ${MAX_FORK_CHILDREN} (got ${n})`, { n })
  const parentId = await resolveId(store, id)
  const parent = await incomingImage(store, parentId)
  if (!materialize) return makeChildren(store, parentId, parent, n, now)
  // The base view the branches stand on is laid out while the children are written and the
  // branches register; each branch waits for this same build before its mount, and fails with it.
  ensureBaseView(store, parent.world.tree).catch(() => undefined)
  const children = await makeChildren(store, parentId, parent, n, now)
  return materializeChildren({ dir: workspace, store, tree: parent.world.tree, children, persistent })
}

async function makeChildren(store: Store, parentId: Digest, parent: Snapshot, n: number, now: () => Date): Promise<ForkChild[]> {
  const prefix = forkRefPrefix(parentId)
  return withWriteLock(store, async () => {
    const lock = await acquireLock(`${store.path(prefix)}.lock`, { what: `forks of ${shortId(parentId)}` })
    try {
      const first = await nextIndex(store, prefix)
      const createdAt = now().toISOString()
      const children: ForkChild[] = []
      for (let index = first; index < first + n; index++) {
        const child: Snapshot = {
          ...parent,
          parents: [parentId],
          meta: { ...parent.meta, message: `fork ${index} of ${shortId(parentId)}`, createdAt, fork: { of: parentId, index } },
        }
        children.push({ index, id: await store.writeObject(child), ref: `${prefix}/${index}` })
      }
      await store.sync() // the children are durable before any ref names them
      await createRefs(
        store,
        children.map((c) => ({ name: c.ref, id: c.id })),
      )
      return children
    } finally {
      await lock.release()
    }
  })
}

async function nextIndex(store: Store, prefix: string): Promise<number> {
  const taken = (await readdir(store.path(prefix)).catch(() => [] as string[])).filter((name) => /^\d+$/.test(name)).map(Number)
  return taken.length === 0 ? 0 : Math.max(...taken) + 1
}
