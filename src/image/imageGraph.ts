import { listStates } from '../branch/lifecycle/branchStore.js'
import type { Digest } from '../objects/digest.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { resolveId } from '../store/resolveId.js'
import type { Store } from '../store/Store.js'
import { countFiles, type FileCount } from '../world/scan/countFiles.js'
import { allRefTargets, reachableSnapshots, refLabels, topoNewestFirst } from '../world/workspace/log.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import type { Snapshot } from '../objects/Snapshot.js'
import { treeSource } from '../world/tree/treeSource.js'
import { allLayers } from './imageLayers.js'

/**
 * What a long-lived reader (the service) keeps between requests: snapshots and tree sizes
 * by digest. Both are content-addressed, so an entry never goes stale.
 */
export interface ImageCache {
  snapshots: Map<Digest, Snapshot>
  treeSizes: Map<Digest, FileCount>
}

export const newImageCache = (): ImageCache => ({ snapshots: new Map(), treeSizes: new Map() })

/** One layer of an image as the graph shows it: the world with its files and bytes, any other layer with its object's stored size. */
export interface LayerSize {
  layer: string
  id: Digest
  bytes: number | null
  files?: number
}

export interface GraphNode {
  id: Digest
  parents: Digest[]
  message: string
  agent: string | null
  createdAt: string
  /** Refs that point here (`HEAD`, `main`, `tag: v1`). */
  refs: string[]
  /** Set on the children `fork` made: which child of which image. */
  fork: { of: Digest; index: number } | null
  /** Live branches that started from this image's files (their base tree is its world). */
  live: string[]
  layers: LayerSize[]
}

export interface GraphPage {
  /** Every image reachable from HEAD or a ref that names one (a head, a tag, a fork, a session: imageRefs). */
  total: number
  offset: number
  /** Children before parents, the newest first; `limit` of them from `offset`. */
  nodes: GraphNode[]
}

/**
 * A page of the image graph of a store: every snapshot reachable from HEAD or a ref that
 * names one (imageRefs), newest first, with its refs, the live branches that started from it and its
 * layers' sizes. Only the page's nodes are sized.
 */
export async function imageGraph({
  offset = 0,
  limit = 200,
  cache = newImageCache(),
  ...locator
}: StoreLocator & { offset?: number; limit?: number; cache?: ImageCache }): Promise<GraphPage> {
  const { store } = await openStore(locator)
  const reachable = await reachableSnapshots(store, await allRefTargets(store), async (id) => {
    const snap = cache.snapshots.get(id) ?? (await readSnapshot(store, id))
    cache.snapshots.set(id, snap)
    return snap
  })
  const ordered = topoNewestFirst(reachable)
  const labels = await refLabels(store)
  const live = await liveBranchesByTree(store)
  const page = ordered.slice(offset, offset + limit)
  const nodes = await Promise.all(page.map(([id, snap]) => graphNode(store, cache, id, snap, labels.get(id) ?? [], live.get(snap.world.tree) ?? [])))
  return { total: ordered.length, offset, nodes }
}

/** One image as the graph shows it (its refs and live branches too), read through the cache. */
export async function imageNode({ id: spec, cache = newImageCache(), ...locator }: StoreLocator & { id: string; cache?: ImageCache }): Promise<GraphNode> {
  const { store } = await openStore(locator)
  const id = await resolveId(store, spec)
  const snap = cache.snapshots.get(id) ?? (await readSnapshot(store, id))
  cache.snapshots.set(id, snap)
  const [labels, live] = await Promise.all([refLabels(store), liveBranchesByTree(store)])
  return graphNode(store, cache, id, snap, labels.get(id) ?? [], live.get(snap.world.tree) ?? [])
}

/** Live branches' names by the tree they started from. */
async function liveBranchesByTree(store: Store): Promise<Map<Digest, string[]>> {
  const byTree = new Map<Digest, string[]>()
  for (const state of await listStates(store)) byTree.set(state.baseTree, [...(byTree.get(state.baseTree) ?? []), state.name])
  return byTree
}

async function graphNode(store: Store, cache: ImageCache, id: Digest, snap: Snapshot, refs: string[], live: string[]): Promise<GraphNode> {
  return {
    id,
    parents: snap.parents,
    message: snap.meta.message,
    agent: snap.meta.agent ?? null,
    createdAt: snap.meta.createdAt,
    refs,
    fork: snap.meta.fork ?? null,
    live,
    layers: await layerSizes(store, cache, snap),
  }
}

/** The world layer with its files and bytes, then every other layer with its object's size. */
async function layerSizes(store: Store, cache: ImageCache, snap: Snapshot): Promise<LayerSize[]> {
  const world = await countFiles(treeSource(store), snap.world.tree, cache.treeSizes)
  return allLayers(snap).map(({ layer, id }) => (layer === 'world' ? { layer, id, ...world } : { layer, id, bytes: store.sizeOf(id) }))
}
