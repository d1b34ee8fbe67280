import { UsageError } from '../errors/index.js'
import { readHead, readRef } from '../store/refs.js'
import { withWriteLock } from '../store/storeLock.js'
import { applyTree } from '../world/checkout/checkout.js'
import { cameFromElsewhere } from '../world/checkout/cameFromElsewhere.js'
import { admitCheckoutCost } from '../world/checkout/checkoutCost.js'
import { readChunks } from '../world/tree/readObjects.js'
import { treeSource } from '../world/tree/treeSource.js'
import { resolveLimits } from '../util/limits.js'
import { recoverCheckout } from '../world/checkout/checkoutJournal.js'
import { clearMergeState, mergeInProgress } from '../world/merge/mergeState.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { withWorkspaceLock } from '../world/workspace/workspaceLock.js'

/**
 * Undo a merge in progress: the workspace back to HEAD's tree exactly (whatever the user
 * changed since the merge began is overwritten, files they added removed), then the merge
 * ends. Works on a damaged merge state too: it needs only HEAD. HEAD from another store (a
 * cloned store's) has its git config and hooks held back, as a checkout of it does.
 * @throws {UsageError} when no merge is in progress
 */
export async function abortMerge(args: StoreLocator = {}): Promise<{ head: string; heldBack: string[] }> {
  const { store, workspace } = await openStore(args)
  await recoverCheckout(store, workspace)
  if (!(await mergeInProgress(store))) throw new UsageError('merge --abort: no merge is in progress')
  return withWriteLock(store, () =>
    withWorkspaceLock(store, async () => {
      const head = (await readRef(store, 'HEAD'))!
      const tree = (await readSnapshot(store, head)).world.tree
      const h = await readHead(store)
      const holdBack = await cameFromElsewhere(store, head)
      // holding git files back walks the tree: admitted first, each shared subtree costed once
      if (holdBack) await admitCheckoutCost({ tree: treeSource(store), chunks: (d) => readChunks(store, d) }, tree, resolveLimits(undefined), `tree ${tree}`)
      // HEAD's own links may lead out only if the user allowed it when snapshotting: HEAD is theirs to restore.
      const headText = h.type === 'symbolic' ? `ref: ${h.ref}\n` : `${h.id}\n`
      const { heldBack } = await applyTree({ store, workspace, tree, head: headText, force: true, allowExternalSymlinks: !holdBack, holdBackGit: holdBack })
      await clearMergeState(store)
      return { head, heldBack }
    }),
  )
}
