import type { Branch } from '../branch/Branch.js'
import type { Workspace } from '../branch/Workspace.js'
import { saveContextLedger } from '../effects/contextLedger.js'
import { InternalError } from '../errors/index.js'
import type { BranchPool } from '../patterns/BranchPool.js'
import type { CandidateResult } from '../patterns/types.js'
import { pullImage } from '../registry/transfer/pullImage.js'
import { isDigest } from '../objects/digest.js'
import { deleteRef, tagRef } from '../store/refs.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import { applyImage } from './applyImage.js'
import type { PushedBase } from './pushBase.js'

/**
 * A success's image pulled into the workspace's store (only what it lacks travels), and a
 * branch of the base tree made to hold the image's files, with the image's outbox as the
 * branch's: committing it sends those deferred effects, once. The pull's tag is dropped
 * again: the branch is what the pattern commits.
 */
export async function fetchResult({
  pool,
  ws,
  base,
  result,
  remote,
  insecure,
}: {
  pool: BranchPool
  ws: Workspace
  base: PushedBase
  result: CandidateResult
  /** The success's image, exactly: `REGISTRY@sha256:<manifest>`. */
  remote: string
  insecure: boolean
}): Promise<Branch> {
  const image = result.image
  if (!isDigest(image)) throw new InternalError(`candidate ${result.index} succeeded without an image`)
  const tag = `fanout-result-${image.slice(7, 23)}`
  const pulled = await pullImage({ store: ws.store, remote, tag, insecure })
  if (pulled.id !== image) throw new InternalError(`candidate ${result.index}'s tag names ${pulled.id}, not the image ${image} its worker reported`)
  await deleteRef(ws.store, tagRef(tag))
  const snapshot = await readSnapshot(ws.store, image)
  const branch = await pool.create(ws, result.index, base.tree)
  await applyImage(ws.store, branch, base.tree, snapshot.world.tree)
  if (snapshot.effects) await saveContextLedger(ws.store, { kind: 'branch', id: branch.id }, snapshot.effects, `fan-out: the outbox of candidate ${result.index}`)
  return branch
}
