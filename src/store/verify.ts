import { openStore, type StoreLocator } from './findStore.js'
import { type Digest, sha256 } from '../objects/digest.js'
import { gcRoots } from './gcRoots.js'
import { listObjects, walkGraph } from './objectGraph.js'
import { hashObjectFile } from './readObjectBytes.js'

export type VerifyProblem = { type: 'corrupt'; digest: Digest; actual: Digest | 'damaged' } | { type: 'missing'; digest: Digest; referencedBy: Digest | 'root' }

export interface VerifyResult {
  ok: boolean
  checked: number
  problems: VerifyProblem[]
}

/** Re-hash every object (files and packed), then walk from the roots to find objects that are referenced but absent. */
export async function verify(locator: StoreLocator = {}): Promise<VerifyResult> {
  const { store } = await openStore(locator)
  const problems: VerifyProblem[] = []
  const objects = await listObjects(store)
  for (let i = 0; i < objects.length; i += 32) {
    await Promise.all(
      objects.slice(i, i + 32).map(async (digest) => {
        const actual = await hashObjectFile(store.objectPath(digest))
        if (actual !== digest) problems.push({ type: 'corrupt', digest, actual })
      }),
    )
  }
  let checked = objects.length
  for (const pack of store.packs.list()) {
    for (const object of pack.index.objects) {
      const bytes = store.packs.readOrDamaged({ pack, object })
      const actual = bytes === 'damaged' ? bytes : sha256(bytes)
      if (actual !== object.digest) problems.push({ type: 'corrupt', digest: object.digest, actual })
      checked++
    }
  }
  const hashedCorrupt = new Set(problems.map((p) => p.digest))
  const { missing } = await walkGraph(store, await gcRoots(store), { hashedCorrupt })
  for (const [digest, referencedBy] of missing) problems.push({ type: 'missing', digest, referencedBy })
  return { ok: problems.length === 0, checked, problems }
}
