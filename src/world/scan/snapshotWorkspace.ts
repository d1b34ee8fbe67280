import type { Digest } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { RefConflictError } from '../../errors/index.js'
import { readRef, tagRef, updateRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { withWriteLock } from '../../store/storeLock.js'
import { respectGitignore } from '../workspace/workspaceConfig.js'
import { withWorkspaceLock } from '../workspace/workspaceLock.js'
import { recoverCheckout } from '../checkout/checkoutJournal.js'
import { assertLinkInside } from '../checkout/admitTree.js'
import { readSnapshot } from '../tree/readObjects.js'
import { treeLookup } from '../checkout/treeLinks.js'
import { treeSource } from '../tree/treeSource.js'
import { type ScanCounts, type ScanResult, scanWorkspace } from './scanWorkspace.js'
import { canonicalJson } from '../../util/canonicalJson.js'
import { SNAPSHOT_LAYERS, type Snapshot, type SnapshotLayer, makeSnapshot } from '../../objects/Snapshot.js'

export interface SnapshotArgs extends StoreLocator {
  message?: string
  agent?: string
  /** Also point `refs/tags/<tag>` at the snapshot. */
  tag?: string
  /** Apply .gitignore files too; remembered for later scans (`status`) until set otherwise. */
  respectGitignore?: boolean
  /** Other layers of the image (trace, effects, ...) as digests of their objects; a layer not given is carried from HEAD. */
  layers?: Partial<Record<SnapshotLayer, Digest>>
  /** The environment (`world.env`), already scrubbed; not given: carried from HEAD. */
  env?: Record<string, string>
  /** Write a new snapshot even when nothing changed since HEAD. */
  allowEmpty?: boolean
  /** Record symlinks that lead out of the workspace (refused otherwise: docs/world-integrity.md). */
  allowExternalSymlinks?: boolean
  onProgress?: (done: number, total: number) => void
  /** Scan the world another way than in full (the service's watcher); see `WorldScanner`. */
  scanner?: WorldScanner
  /** Conclude a merge: these parents (the first must be HEAD) and the image's other fields as the merge decided them. */
  merging?: MergingSnapshot
}

export interface MergingSnapshot {
  parents: Digest[]
  env?: Record<string, string> | undefined
  /** Layers other than the world (trace, effects, any unknown one), as they go into the snapshot. */
  layers: Record<string, unknown>
}

export interface SnapshotResult extends ScanCounts {
  id: Digest
  tree: Digest
  parents: Digest[]
  /** False when nothing changed since HEAD: no object was written and `id` is HEAD. */
  created: boolean
}

/**
 * Snapshot a workspace: scan it into trees, write the snapshot object, make every object
 * durable with one sync, then move the head HEAD follows (compare-and-swap, so two concurrent
 * snapshots never lose one another: the loser retries on top of the winner).
 */
export async function snapshotWorkspace(args: SnapshotArgs = {}): Promise<SnapshotResult> {
  const { store, workspace } = await openStore(args)
  const tag = args.tag === undefined ? undefined : tagRef(args.tag) // a bad name fails before anything is written
  return withWorldScan({ ...args, store, workspace }, async (scan) => {
    for (let attempt = 0; ; attempt++) {
      const head = await readRef(store, 'HEAD')
      const parent = head ? await readSnapshot(store, head) : null
      if (args.merging && head !== args.merging.parents[0]) {
        throw new RefConflictError(`HEAD moved to ${head ?? 'nothing'} since the merge began at ${args.merging.parents[0]}: 'forkpoint merge --abort', then merge again`, {
          actual: head,
          expected: args.merging.parents[0],
        })
      }
      // a merge's layers and env are what the merge decided; otherwise HEAD's carry over until new ones are given
      const layers = args.merging ? { ...args.layers } : { ...carriedLayers(parent), ...args.layers }
      const env = args.merging ? args.merging.env : (args.env ?? parent?.world.env)
      if (head && parent && !args.allowEmpty && !args.merging && unchanged(parent, scan.tree, layers, env)) {
        await scan.persist()
        if (tag) await updateRef({ store, name: tag, id: head, message: 'tag' })
        return { id: head, tree: scan.tree, parents: parent.parents, created: false, ...counts(scan) }
      }
      const made = makeSnapshot({
        parents: args.merging?.parents ?? (head ? [head] : []),
        tree: scan.tree,
        message: args.message ?? 'snapshot',
        agent: args.agent,
        layers,
        ...(env ? { env } : {}),
      })
      const snapshot: Snapshot = { ...made, ...args.merging?.layers }
      const id = await store.writeObject(snapshot)
      await scan.persist() // one sync for the scan's objects and the snapshot's, before the ref moves
      try {
        await updateRef({ store, name: 'HEAD', id, expected: head, message: `snapshot: ${snapshot.meta.message}` })
      } catch (err) {
        if (attempt < 20 && (err as { code?: string }).code === 'RefConflictError') continue
        throw err
      }
      if (tag) await updateRef({ store, name: tag, id, message: 'tag' })
      return { id, tree: scan.tree, parents: snapshot.parents, created: true, ...counts(scan) }
    }
  })
}

export interface WorldScanArgs extends Pick<SnapshotArgs, 'respectGitignore' | 'allowExternalSymlinks' | 'onProgress' | 'scanner'> {
  store: Store
  workspace: string
  /** Remember `respectGitignore` when it is given (default true: a snapshot does, `status` does not). */
  rememberGitignore?: boolean
}

/** How the world is scanned: in full (`scanWorkspace`, the default), or from what a file watcher knows changed (the service's). */
export type WorldScanner = (args: {
  store: Store
  workspace: string
  respectGitignore: boolean
  onProgress?: ((done: number, total: number) => void) | undefined
}) => Promise<ScanResult>

/** The scanner that reads the whole workspace (what the stat cache cannot vouch for), writing its objects. */
export const fullScanner: WorldScanner = ({ store, workspace, respectGitignore, onProgress }) => scanWorkspace({ store, dir: workspace, write: true, respectGitignore, onProgress })

/**
 * Scan the workspace into trees (their objects written; `scan.persist()` makes them durable)
 * and hand the scan to `use` while the store's write lock keeps gc away from them: the one
 * way in for every snapshot of the world, HEAD's or another ref's (a LangGraph thread's).
 */
export async function withWorldScan<T>(args: WorldScanArgs, use: (scan: ScanResult) => Promise<T>): Promise<T> {
  const { store, workspace } = args
  await recoverCheckout(store, workspace)
  const gitignore = await respectGitignore(store, args.respectGitignore, { remember: args.rememberGitignore ?? true })
  return withWriteLock(store, async () => {
    // Taken inside the writer registration; no holder of the workspace lock waits for writers or gc: no cycle.
    const scanner = args.scanner ?? fullScanner
    const scan = await withWorkspaceLock(store, () => scanner({ store, workspace, respectGitignore: gitignore, onProgress: args.onProgress }))
    if (!args.allowExternalSymlinks) await assertSymlinksInside(store, scan)
    return use(scan)
  })
}

/** The one rule for symlinks on every way in: none may lead out of the tree, resolved through the tree's own links. */
async function assertSymlinksInside(store: Store, scan: ScanResult): Promise<void> {
  const links = treeLookup(treeSource(store, scan.trees), scan.tree)
  for (const { path, target } of scan.symlinks) await assertLinkInside(links, path.split('/'), target)
}

function unchanged(parent: Snapshot, tree: Digest, layers: SnapshotArgs['layers'], env: SnapshotArgs['env']): boolean {
  if (parent.world.tree !== tree || canonicalJson(parent.world.env ?? {}) !== canonicalJson(env ?? {})) return false
  return Object.entries(layers ?? {}).every(([layer, digest]) => parent[layer] === digest)
}

/** An image keeps its layers from one snapshot to the next until one is given anew. */
export function carriedLayers(parent: Snapshot | null): Partial<Record<SnapshotLayer, Digest>> {
  const layers: Partial<Record<SnapshotLayer, Digest>> = {}
  for (const layer of SNAPSHOT_LAYERS) if (parent?.[layer] !== undefined) layers[layer] = parent[layer]
  return layers
}

function counts(scan: ScanResult): ScanCounts {
  return { files: scan.files, bytes: scan.bytes, hashedFiles: scan.hashedFiles, hashedBytes: scan.hashedBytes, listedDirs: scan.listedDirs, skipped: scan.skipped }
}
