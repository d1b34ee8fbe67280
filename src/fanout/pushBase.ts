import type { Workspace } from '../branch/Workspace.js'
import { pushImage } from '../registry/pushImage.js'
import { type Digest, digestHex } from '../store/digest.js'
import { readRef } from '../store/refs.js'
import { makeSnapshot } from '../world/Snapshot.js'

/** The base a fan-out starts from: the workspace's tree as an image, and where workers find it. */
export interface PushedBase {
  id: Digest
  tree: Digest
  /** `oci://HOST/REPO@sha256:<manifest>`: exactly this image. */
  remote: string
  sentBytes: number
}

/**
 * Scan the workspace (only changed files are read) and push it as an image whose parent
 * is HEAD, under a tag derived from its id; no ref of the store moves. The push is
 * incremental: only objects the registry's packs lack travel.
 */
export async function pushBase(ws: Workspace, registry: string, insecure: boolean): Promise<PushedBase> {
  const tree = await ws.refresh()
  const head = await readRef(ws.store, 'HEAD')
  const id = await ws.store.writeObject(makeSnapshot({ parents: head ? [head] : [], tree, message: 'fan-out base' }))
  const pushed = await pushImage({ store: ws.store, id, remote: `${registry}:fanout-base-${digestHex(id).slice(0, 16)}`, insecure })
  return { id, tree, remote: `${registry}@${pushed.manifest}`, sentBytes: pushed.sentBytes }
}
