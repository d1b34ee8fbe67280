import { CorruptDataError } from '../../errors/index.js'
import type { Store } from '../../store/Store.js'
import { forEachLimit } from '../../util/forEachLimit.js'
import { isPacksManifest, parseImageIndex } from '../manifest/imageManifest.js'
import type { Limits } from './limits.js'
import { type LoadedPack, loadPacks } from './loadPacks.js'
import { readSegment } from '../cache/segmentCache.js'
import type { Transport } from '../transport/Transport.js'

/**
 * The packs the images tagged in a repository hold, learned from their indexes (a few
 * requests per tag; indexes seen before come from the cache), with the packs of the
 * tag being pushed first. A tag that is not a readable packed image (a signature, an
 * image pushed one object per blob, something else) teaches nothing and is skipped.
 */
export async function repositoryPacks({ store, transport, tag, limits }: { store: Store; transport: Transport; tag: string | null; limits: Limits }): Promise<LoadedPack[]> {
  // the tag's own packs asked for beside the tag list: a cold push is mostly round trips
  const own = tag === null ? null : packsOfTag(store, transport, tag, limits)
  own?.catch(() => {}) // a failure is thrown where it is awaited, below
  const tags = await transport.listTags()
  const others = tags.filter((t) => t !== tag && !t.endsWith('.sig'))
  const ordered = tag === null ? others : [tag, ...others]
  const byTag = new Map<string, LoadedPack[]>()
  await forEachLimit(others, 4, async (name) => {
    byTag.set(name, await packsOfTag(store, transport, name, limits))
  })
  if (tag !== null) byTag.set(tag, await own!)
  const seen = new Set<string>()
  const packs: LoadedPack[] = []
  for (const name of ordered) {
    for (const p of byTag.get(name) ?? []) {
      if (seen.has(p.pair.pack.digest)) continue
      seen.add(p.pair.pack.digest)
      packs.push(p)
    }
  }
  return packs
}

async function packsOfTag(store: Store, transport: Transport, tag: string, limits: Limits): Promise<LoadedPack[]> {
  try {
    const current = await transport.getManifest(tag)
    if (current === null) return []
    const packs: LoadedPack[] = []
    for (const descriptor of parseImageIndex(current.bytes, `tag ${tag}`).segments) {
      const { bytes } = await readSegment(store, transport, descriptor)
      if (isPacksManifest(bytes)) packs.push(...(await loadPacks({ store, transport, manifest: bytes, where: `manifest ${descriptor.digest}`, limits })))
    }
    return packs
  } catch (err) {
    if (err instanceof CorruptDataError) return [] // not a (readable) packed image: nothing to learn from it
    throw err
  }
}
