import type { Digest } from '../../objects/digest.js'
import { listRefs } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'

/**
 * What each ref namespace of a store holds. `images`: snapshots, which `log --all` and the
 * graph start from; `other`: objects of other kinds, or refs that only keep objects from gc
 * (a live machine's start, a merge's draft), never shown as history. A namespace not listed
 * here (a ref made by hand) is `maybe`: shown when its object is a snapshot.
 */
const NAMESPACES: ReadonlyArray<{ prefix: string; holds: 'images' | 'maybe' | 'other' }> = [
  { prefix: 'refs/heads/', holds: 'images' }, // heads, `machines/<id>` a machine's snapshots among them
  { prefix: 'refs/tags/', holds: 'images' },
  { prefix: 'refs/forks/', holds: 'images' }, // `fork`'s children and `llm fork --score`'s best
  { prefix: 'refs/claude/', holds: 'images' }, // a Claude Code session's latest image
  { prefix: 'refs/threads/', holds: 'images' }, // a LangGraph thread's latest image
  // what a live machine started from (a machine image, or a snapshot its parent's head reaches), kept for gc only
  { prefix: 'refs/machines/', holds: 'other' },
  { prefix: 'refs/machine-images/', holds: 'other' },
  { prefix: 'refs/runs/', holds: 'other' },
  { prefix: 'refs/effects/', holds: 'other' },
  { prefix: 'refs/merge/', holds: 'other' },
]

export interface ImageRef {
  name: string
  id: Digest
}

/** Every ref that names a snapshot, heads first, then tags, then the other namespaces in the order above. */
export async function imageRefs(store: Store): Promise<ImageRef[]> {
  const refs = await listRefs(store)
  const rank = (name: string) => {
    const at = NAMESPACES.findIndex((n) => name.startsWith(n.prefix))
    return at < 0 ? NAMESPACES.length : at
  }
  const kept: ImageRef[] = []
  for (const ref of refs) {
    const holds = NAMESPACES[rank(ref.name)]?.holds ?? 'maybe'
    if (holds === 'images' || (holds === 'maybe' && (await isSnapshot(store, ref.id)))) kept.push(ref)
  }
  return kept.sort((a, b) => rank(a.name) - rank(b.name))
}

/** How `log` names a ref beside the snapshot it points at: `main`, `tag: v1`, else its full name (`refs/forks/<id>/0`), which any id argument takes. */
export function refLabel(name: string): string {
  if (name.startsWith('refs/heads/')) return name.slice('refs/heads/'.length)
  if (name.startsWith('refs/tags/')) return `tag: ${name.slice('refs/tags/'.length)}`
  return name
}

async function isSnapshot(store: Store, id: Digest): Promise<boolean> {
  if (!(await store.has(id))) return false
  // a blob, or an object that does not parse, is no snapshot: `verify` is what reports damage
  return (await store.readObject(id).catch(() => null))?.kind === 'snapshot'
}
