import { hostname } from 'node:os'
import type { Workspace } from '../branch/Workspace.js'
import { pushImage } from '../registry/transfer/pushImage.js'
import { type Digest, digestHex, sha256 } from '../objects/digest.js'
import { readRef } from '../store/refs.js'
import { makeSnapshot } from '../objects/Snapshot.js'

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
 * is HEAD, under the workspace's own base tag (baseTag); no ref of the store moves. The
 * push is incremental: only objects the registry's packs lack travel, the last base's
 * packs looked at first.
 */
export async function pushBase(ws: Workspace, registry: string, insecure: boolean): Promise<PushedBase> {
  const tree = await ws.refresh()
  const head = await readRef(ws.store, 'HEAD')
  const id = await ws.store.writeObject(makeSnapshot({ parents: head ? [head] : [], tree, message: 'fan-out base' }))
  const pushed = await pushImage({ store: ws.store, id, remote: `${registry}:${baseTag(ws)}`, insecure })
  return { id, tree, remote: `${registry}@${pushed.manifest}`, sentBytes: pushed.sentBytes }
}

/**
 * One tag per submitting workspace (its host and store), moved by each exploration: jobs
 * name their base by digest, the tag keeps the latest base from a registry's collection of
 * untagged images, and the repository's tags (which a push to a new tag reads, one request
 * each) stay as few as the workspaces that fan out to it.
 */
function baseTag(ws: Workspace): string {
  return `fanout-base-${digestHex(sha256(`${hostname()}\0${ws.store.root}`)).slice(0, 16)}`
}
