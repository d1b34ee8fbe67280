import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { STORE_DIR_NAME, type StoreLocator } from './findStore.js'
import { excludeStoreInGit } from './excludeStoreInGit.js'
import { ignoreStoreInGitignore } from './ignoreStoreInGitignore.js'
import { StoreNotFoundError } from '../errors/index.js'
import { assertStoreNotLinked } from './statStoreEntry.js'
import { Store } from './Store.js'

export interface InitResult {
  storeDir: string
  workspace: string
  created: boolean
  /** Whether `/.forkpoint/` was added to the workspace's existing .gitignore. */
  gitignoreUpdated: boolean
  /** Whether `/.forkpoint/` was added to the git repository's `info/exclude` (a workspace in one, without a .gitignore). */
  gitExcludeUpdated: boolean
}

/** Create the store for a workspace (`DIR/.forkpoint`, or `store` when given), ignored by git (`ignoreStoreInGitignore`, `excludeStoreInGit`). Idempotent. */
export async function initWorkspace({ dir = process.cwd(), store }: StoreLocator = {}): Promise<InitResult> {
  const workspace = resolve(dir)
  const storeDir = store === undefined ? join(workspace, STORE_DIR_NAME) : typeof store === 'string' ? resolve(dir, store) : store.root
  if (store === undefined) assertStoreNotLinked(storeDir)
  // only "not a store" makes one: a store refused (a symlinked directory, another user's) is refused here too
  const already = await Store.open(storeDir).then(
    () => true,
    (err: unknown) => {
      if (err instanceof StoreNotFoundError) return false
      throw err
    },
  )
  await Store.init(storeDir)
  const gitignoreUpdated = await ignoreStoreInGitignore(workspace, storeDir)
  const gitExcludeUpdated = !gitignoreUpdated && !existsSync(join(workspace, '.gitignore')) && (await excludeStoreInGit(workspace, storeDir))
  return { storeDir, workspace, created: !already, gitignoreUpdated, gitExcludeUpdated }
}
