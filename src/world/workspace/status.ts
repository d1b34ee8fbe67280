import type { Digest } from '../../objects/digest.js'
import { readHead, readRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { recoverCheckout } from '../checkout/checkoutJournal.js'
import { type Change, diffTrees } from '../diff/diffTrees.js'
import { readCommitState } from '../merge/commitState.js'
import { mergeInProgress, readMergeState } from '../merge/mergeState.js'
import { readSnapshot } from '../tree/readObjects.js'
import { type ScanResult, scanWorkspace } from '../scan/scanWorkspace.js'
import { type WorldScanner, withWorldScan } from '../scan/snapshotWorkspace.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { treeSource } from '../tree/treeSource.js'
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
  /** A branch commit stopped on conflicts in the workspace (`commit NAME --continue` / `--abort` end it). */
  commit: { branch: string; conflicts: string[] } | null
}

export interface StatusArgs extends StoreLocator {
  respectGitignore?: boolean
  /**
   * Scan the workspace this way (the service's watcher) instead of in full: its trees are
   * written to the store, as a snapshot's are, and it is remembered for the next scan.
   */
  scanner?: WorldScanner | undefined
  /**
   * Only read (the web view's): a checkout another process left unfinished stays for the next
   * writer to finish, and the files are reported as they lie.
   */
  readOnly?: boolean
}

/** What changed in the workspace since HEAD. Reads only files the stat cache (or the scanner) cannot vouch for; writes nothing without a scanner. */
export async function status(args: StatusArgs = {}): Promise<StatusResult> {
  const { store, workspace } = await openStore(args)
  const { scanner } = args
  if (scanner)
    return withWorldScan({ store, workspace, scanner, allowExternalSymlinks: true, respectGitignore: args.respectGitignore, rememberGitignore: false }, async (scan) => {
      await scan.persist() // the scanner builds its next scan on this one's trees
      return statusOf(store, workspace, scan)
    })
  if (!args.readOnly) await recoverCheckout(store, workspace)
  const scan = await scanWorkspace({ store, dir: workspace, write: false, respectGitignore: await respectGitignore(store, args.respectGitignore, { remember: false }) })
  return statusOf(store, workspace, scan)
}

async function statusOf(store: Store, workspace: string, scan: ScanResult): Promise<StatusResult> {
  const h = await readHead(store)
  const head = h.type === 'symbolic' ? await readRef(store, h.ref) : h.id
  const headTree = head ? (await readSnapshot(store, head)).world.tree : null
  const changes = await diffTrees({ source: treeSource(store, scan.trees), a: headTree, b: scan.tree })
  return {
    workspace,
    headName: h.type === 'symbolic' ? h.ref.replace(/^refs\/heads\//, '') : null,
    head,
    clean: changes.length === 0,
    changes,
    merge: await mergeSummary(store),
    commit: await commitSummary(store),
  }
}

async function mergeSummary(store: Store): Promise<StatusResult['merge']> {
  if (!(await mergeInProgress(store))) return null
  const state = await readMergeState(store).catch(() => null)
  return { theirs: state?.theirs ?? null, conflicts: state?.conflicts.map((c) => c.path) ?? [] }
}

async function commitSummary(store: Store): Promise<StatusResult['commit']> {
  const state = await readCommitState(store)
  return state && { branch: state.branch, conflicts: state.conflicts.map((c) => c.path) }
}
