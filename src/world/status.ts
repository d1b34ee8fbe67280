import type { Digest } from '../store/digest.js'
import { readHead, readRef } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import { recoverCheckout } from './checkoutJournal.js'
import { type Change, diffTrees } from './diffTrees.js'
import { mergeInProgress, readMergeState } from './mergeState.js'
import { readSnapshot } from './readObjects.js'
import { scanWorkspace } from './scanWorkspace.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { treeSource } from './treeSource.js'
import { respectGitignore } from './workspaceConfig.js'

export interface StatusResult {
  workspace: string
  /** The head HEAD follows (`main` for `refs/heads/main`), or null when detached. */
  headName: string | null
  head: Digest | null
  clean: boolean
  changes: Change[]
  /** A merge stopped on conflicts (`merge --continue` / `--abort` end it); `theirs` is null when its state is damaged. */
  merge: { theirs: Digest | null; conflicts: string[] } | null
}

/** What changed in the workspace since HEAD. Reads only files the stat cache cannot vouch for; writes nothing. */
export async function status(args: StoreLocator & { respectGitignore?: boolean } = {}): Promise<StatusResult> {
  const { store, workspace } = await openStore(args)
  await recoverCheckout(store, workspace)
  const scan = await scanWorkspace({ store, dir: workspace, write: false, respectGitignore: await respectGitignore(store, args.respectGitignore, { remember: false }) })
  const h = await readHead(store)
  const head = h.type === 'symbolic' ? await readRef(store, h.ref) : h.id
  const headTree = head ? (await readSnapshot(store, head)).world.tree : null
  const changes = await diffTrees({ source: treeSource(store, scan.trees), a: headTree, b: scan.tree })
  return { workspace, headName: h.type === 'symbolic' ? h.ref.replace(/^refs\/heads\//, '') : null, head, clean: changes.length === 0, changes, merge: await mergeSummary(store) }
}

async function mergeSummary(store: Store): Promise<StatusResult['merge']> {
  if (!(await mergeInProgress(store))) return null
  const state = await readMergeState(store).catch(() => null)
  return { theirs: state?.theirs ?? null, conflicts: state?.conflicts.map((c) => c.path) ?? [] }
}
