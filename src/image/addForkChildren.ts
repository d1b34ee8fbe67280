import { readdir } from 'node:fs/promises'
import { createRefs } from '../store/createRefs.js'
import { type Digest, shortId } from '../objects/digest.js'
import { acquireLock } from '../store/lockFile.js'
import { withWriteLock } from '../store/storeLock.js'
import type { Store } from '../store/Store.js'
import { forkRefPrefix } from './forkBranch.js'

/** A child of an image, kept by a ref of the image's forks. */
export interface NamedChild {
  index: number
  id: Digest
  /** `refs/forks/<short id of the parent>/<index>`. */
  ref: string
}

/**
 * Write `n` children of `parent` (`make(index)` writes child `index` and returns its id) and
 * name each `refs/forks/<short id>/<index>`, numbering on from the children there, under the
 * store's write lock and the lock of the parent's forks. The children are durable before any
 * ref names them.
 */
export async function addForkChildren(store: Store, parent: Digest, n: number, make: (index: number) => Promise<Digest>): Promise<NamedChild[]> {
  const prefix = forkRefPrefix(parent)
  return withWriteLock(store, async () => {
    const lock = await acquireLock(`${store.path(prefix)}.lock`, { what: `forks of ${shortId(parent)}` })
    try {
      const first = await nextIndex(store, prefix)
      const children: NamedChild[] = []
      for (let index = first; index < first + n; index++) children.push({ index, id: await make(index), ref: `${prefix}/${index}` })
      await store.sync()
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
