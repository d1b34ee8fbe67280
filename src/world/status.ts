import type { Digest } from '../store/digest.js'
import { readHead, readRef } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import { recoverCheckout } from './checkoutJournal.js'
import { type Change, diffTrees } from './diffTrees.js'
import { readSnapshot } from './readObjects.js'
import { scanWorkspace } from './scanWorkspace.js'
import { resolveWorkspace } from './snapshotWorkspace.js'
import { treeSource } from './treeSource.js'
import { respectGitignore } from './workspaceConfig.js'

export interface StatusResult {
  workspace: string
  /** The branch HEAD follows, or null when detached. */
  branch: string | null
  head: Digest | null
  clean: boolean
  changes: Change[]
}

/** What changed in the workspace since HEAD. Reads only files the stat cache cannot vouch for; writes nothing. */
export async function status(args: { dir?: string; store?: Store | string; respectGitignore?: boolean } = {}): Promise<StatusResult> {
  const { store, workspace } = await resolveWorkspace(args)
  await recoverCheckout(store, workspace)
  const scan = await scanWorkspace({ store, dir: workspace, write: false, respectGitignore: await respectGitignore(store, args.respectGitignore, { remember: false }) })
  const h = await readHead(store)
  const head = h.type === 'symbolic' ? await readRef(store, h.ref) : h.id
  const headTree = head ? (await readSnapshot(store, head)).world.tree : null
  const changes = await diffTrees({ source: treeSource(store, scan.trees), a: headTree, b: scan.tree })
  return { workspace, branch: h.type === 'symbolic' ? h.ref.replace(/^refs\/heads\//, '') : null, head, clean: changes.length === 0, changes }
}
