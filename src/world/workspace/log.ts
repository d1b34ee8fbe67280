import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { Digest } from '../../objects/digest.js'
import { readRef } from '../../store/refs.js'
import { resolveId } from '../../store/resolveId.js'
import { readShallow } from '../../store/shallow.js'
import type { Store } from '../../store/Store.js'
import { type ImageRef, imageRefs, refLabel } from './imageRefs.js'
import { readSnapshot } from '../tree/readObjects.js'
import type { Snapshot } from '../../objects/Snapshot.js'

export interface LogEntry {
  id: Digest
  parents: Digest[]
  tree: Digest
  message: string
  agent?: string
  createdAt: string
  /** Refs that point here (`HEAD`, `main`, `tag: v1`). */
  refs: string[]
}

/**
 * The history reachable from `from` (default HEAD; with `all`, from HEAD and every ref that
 * names a snapshot, whatever its namespace: imageRefs), newest first:
 * every ancestor through every parent, each once, ordered by creation time with children
 * before parents.
 */
export async function log({ from = 'HEAD', all = false, limit = Infinity, ...locator }: StoreLocator & { from?: string; all?: boolean; limit?: number }): Promise<LogEntry[]> {
  const { store } = await openStore(locator)
  const refs = await imageRefs(store)
  const starts = all ? await allRefTargets(store, refs) : [from === 'HEAD' ? await readRef(store, 'HEAD') : await resolveId(store, from)].filter((id): id is Digest => id !== null)
  if (starts.length === 0) return []
  const labels = await refLabels(store, refs)
  return topoNewestFirst(await reachableSnapshots(store, starts))
    .slice(0, limit)
    .map(([id, s]) => ({
      id,
      parents: s.parents,
      tree: s.world.tree,
      message: s.meta.message,
      ...(s.meta.agent ? { agent: s.meta.agent } : {}),
      createdAt: s.meta.createdAt,
      refs: labels.get(id) ?? [],
    }))
}

/** Children always before their parents; among the ready ones, the newest first. */
export function topoNewestFirst(nodes: Map<Digest, Snapshot>): Array<[Digest, Snapshot]> {
  const children = new Map<Digest, number>()
  for (const s of nodes.values()) for (const p of s.parents) children.set(p, (children.get(p) ?? 0) + 1)
  const ready = [...nodes.keys()].filter((id) => !children.get(id))
  const out: Array<[Digest, Snapshot]> = []
  while (ready.length > 0) {
    ready.sort((a, b) => (nodes.get(a)!.meta.createdAt < nodes.get(b)!.meta.createdAt ? -1 : 1))
    const id = ready.pop()!
    const snap = nodes.get(id)!
    out.push([id, snap])
    for (const p of snap.parents) {
      const left = (children.get(p) ?? 1) - 1
      children.set(p, left)
      if (left === 0 && nodes.has(p)) ready.push(p)
    }
  }
  return out
}

/** Every snapshot reachable from `starts`, by id; `read` reads one (a cache may answer first). */
export async function reachableSnapshots(store: Store, starts: Digest[], read = (id: Digest) => readSnapshot(store, id)): Promise<Map<Digest, Snapshot>> {
  const seen = new Map<Digest, Snapshot>()
  const frontier: Digest[] = [...starts]
  const shallow = await readShallow(store)
  while (frontier.length > 0) {
    const id = frontier.pop()!
    if (seen.has(id)) continue
    const snap = await read(id)
    seen.set(id, snap)
    // a shallow image's history ends here: parents it left out are not there to read
    for (const p of snap.parents) if (!shallow.has(id) || (await store.has(p))) frontier.push(p)
  }
  return seen
}

/** HEAD and every ref that names a snapshot (imageRefs: heads, tags, forks, sessions, threads, a live machine's start). */
export async function allRefTargets(store: Store, refs?: ImageRef[]): Promise<Digest[]> {
  const head = await readRef(store, 'HEAD')
  return [...new Set([...(head ? [head] : []), ...(refs ?? (await imageRefs(store))).map((r) => r.id)])]
}

/** The labels of each snapshot a ref names: `HEAD`, then each ref's (refLabel). */
export async function refLabels(store: Store, refs?: ImageRef[]): Promise<Map<Digest, string[]>> {
  const labels = new Map<Digest, string[]>()
  const add = (id: Digest, label: string) => labels.set(id, [...(labels.get(id) ?? []), label])
  const head = await readRef(store, 'HEAD')
  if (head) add(head, 'HEAD')
  for (const ref of refs ?? (await imageRefs(store))) add(ref.id, refLabel(ref.name))
  return labels
}
