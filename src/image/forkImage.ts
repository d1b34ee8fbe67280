import { openStore, type StoreLocator } from '../store/findStore.js'
import { UsageError } from '../errors/index.js'
import { type Digest, shortId } from '../objects/digest.js'
import { resolveId } from '../store/resolveId.js'
import type { Store } from '../store/Store.js'
import { addForkChildren, type NamedChild } from './addForkChildren.js'
import { cameFromElsewhere } from '../world/checkout/cameFromElsewhere.js'
import { recordForeignImage } from '../store/foreignImages.js'
import { incomingImage } from './incomingImage.js'
import { materializeChildren } from './materializeFork.js'
import { ensureBaseDir } from '../branch/mount/baseDir.js'
import type { Snapshot } from '../objects/Snapshot.js'

/** Most children one fork makes: each is an object and a ref. */
export const MAX_FORK_CHILDREN = 10_000

export interface ForkChild extends NamedChild {
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
  /** Where FORKPOINT_KEY is read from, to verify the incoming image's effects ledger. @default process.env */
  env?: NodeJS.ProcessEnv
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
export async function forkImage({ id, n, materialize = false, persistent = false, now = () => new Date(), env = process.env, ...locator }: ForkImageArgs): Promise<ForkChild[]> {
  const { store, workspace } = await openStore(locator)
  if (!Number.isInteger(n) || n < 1 || n > MAX_FORK_CHILDREN) throw new UsageError(`fork: -n must be a whole number from 1 to ${MAX_FORK_CHILDREN} (got ${n})`, { n })
  const parentId = await resolveId(store, id)
  const parent = await incomingImage(store, parentId, env)
  if (!materialize) return makeChildren(store, parentId, parent, n, now)
  // The base directory the branches stand on is laid out while the children are written and the
  // branches register; each branch waits for this same build before its mount, and fails with it.
  ensureBaseDir(store, parent.world.tree).catch(() => undefined)
  const children = await makeChildren(store, parentId, parent, n, now)
  return materializeChildren({ dir: workspace, store, tree: parent.world.tree, children, persistent })
}

async function makeChildren(store: Store, parentId: Digest, parent: Snapshot, n: number, now: () => Date): Promise<ForkChild[]> {
  const createdAt = now().toISOString()
  const elsewhere = await cameFromElsewhere(store, parentId)
  return addForkChildren(store, parentId, n, async (index) => {
    const child = await store.writeObject({
      ...parent,
      parents: [parentId],
      meta: { ...parent.meta, message: `fork ${index} of ${shortId(parentId)}`, createdAt, fork: { of: parentId, index } },
    } satisfies Snapshot)
    if (elsewhere) await recordForeignImage(store, child) // the parent's world as it is (`inheritElsewhere`)
    return child
  })
}
