import { UsageError } from '../errors/index.js'
import { readHead, readRef } from '../store/refs.js'
import { withWriteLock } from '../store/storeLock.js'
import { applyTree } from '../world/checkout/checkout.js'
import { recoverCheckout } from '../world/checkout/checkoutJournal.js'
import { clearMergeState, mergeInProgress } from '../world/merge/mergeState.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { withWorkspaceLock } from '../world/workspace/workspaceLock.js'

/**
 * Undo a merge in progress: the workspace back to HEAD's tree exactly (whatever the user
 * changed since the merge began is overwritten, files they added removed), then the merge
 * ends. Works on a damaged merge state too: it needs only HEAD.
 * @throws {UsageError} when no merge is in progress
 */
export async function abortMerge(args: StoreLocator = {}): Promise<{ head: string }> {
  const { store, workspace } = await openStore(args)
  await recoverCheckout(store, workspace)
  if (!(await mergeInProgress(store))) throw new UsageError('merge --abort: no merge is in progress')
  return withWriteLock(store, () =>
    withWorkspaceLock(store, async () => {
      const head = (await readRef(store, 'HEAD'))!
      const tree = (await readSnapshot(store, head)).world.tree
      const h = await readHead(store)
      // HEAD's own links may lead out only if the user allowed it when snapshotting: HEAD is theirs to restore.
      await applyTree({ store, workspace, tree, head: h.type === 'symbolic' ? `ref: ${h.ref}\n` : `${h.id}\n`, force: true, allowExternalSymlinks: true })
      await clearMergeState(store)
      return { head }
    }),
  )
}
