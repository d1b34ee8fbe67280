import { UsageError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { resolveId } from '../store/resolveId.js'
import type { Store } from '../store/Store.js'
import { diffRuns } from '../trace/diff/diffRuns.js'
import { type Change, diffTrees } from '../world/diff/diffTrees.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import type { Snapshot } from '../objects/Snapshot.js'
import { treeSource } from '../world/tree/treeSource.js'
import { readRunObject } from '../trace/core/loadRun.js'
import { allLayers } from './imageLayers.js'

/** One layer of an image against the same layer of its parent. */
export interface LayerChange {
  layer: string
  before: Digest | null
  after: Digest | null
  changed: boolean
  /** The trace layer: how the run differs from the parent's, in one line. */
  summary?: string
}

export interface ImageChanges {
  id: Digest
  /** The parent compared with (the first, unless asked), or null for a root image. */
  parent: Digest | null
  layers: LayerChange[]
  /** The world layer's changed paths, at most `limit` of them; `total` says how many there are. */
  files: { total: number; changes: Change[] }
}

/**
 * What an image changed against a parent, layer by layer: the world's changed paths, the
 * trace's first divergence from the parent's run, and for every other layer whether it is
 * another object.
 * @throws {UsageError} `parent` is not a parent of the image
 */
export async function imageChanges({
  id: spec,
  parent: parentSpec,
  limit = 1000,
  ...locator
}: StoreLocator & { id: string; parent?: string; limit?: number }): Promise<ImageChanges> {
  const { store } = await openStore(locator)
  const id = await resolveId(store, spec)
  const snap = await readSnapshot(store, id)
  const parent = parentSpec === undefined ? (snap.parents[0] ?? null) : await resolveId(store, parentSpec)
  if (parent !== null && !snap.parents.includes(parent)) throw new UsageError(`${parent} is not a parent of ${id}`, { parent: parentSpec ?? '' })
  const base = parent === null ? null : await readSnapshot(store, parent)
  const changes = await diffTrees({ source: treeSource(store), a: base?.world.tree ?? null, b: snap.world.tree })
  return { id, parent, layers: await layerChanges(store, base, snap), files: { total: changes.length, changes: changes.slice(0, limit) } }
}

async function layerChanges(store: Store, base: Snapshot | null, snap: Snapshot): Promise<LayerChange[]> {
  const digests = (s: Snapshot | null) => new Map<string, Digest>(s ? allLayers(s).map((l) => [l.layer, l.id]) : [])
  const before = digests(base)
  const after = digests(snap)
  const names = [...new Set([...after.keys(), ...before.keys()])]
  return Promise.all(
    names.map(async (layer) => {
      const [b, a] = [before.get(layer) ?? null, after.get(layer) ?? null]
      const change: LayerChange = { layer, before: b, after: a, changed: a !== b }
      if (layer === 'trace' && change.changed && a && b) change.summary = diffRuns({ a: await readRunObject(store, b), b: await readRunObject(store, a) }).explanation
      return change
    }),
  )
}
