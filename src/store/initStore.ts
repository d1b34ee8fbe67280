import { join, resolve } from 'node:path'
import { STORE_DIR_NAME } from './findStore.js'
import { ignoreStoreInGitignore } from './ignoreStoreInGitignore.js'
import { Store } from './Store.js'

export interface InitResult {
  storeDir: string
  workspace: string
  created: boolean
  /** Whether `/.forkpoint/` was added to the workspace's existing .gitignore. */
  gitignoreUpdated: boolean
}

/** Create the store for a workspace (`DIR/.forkpoint`, or `store` when given). Idempotent. */
export async function initWorkspace({ dir = process.cwd(), store }: { dir?: string; store?: string | undefined } = {}): Promise<InitResult> {
  const workspace = resolve(dir)
  const storeDir = store ? resolve(store) : join(workspace, STORE_DIR_NAME)
  const already = await Store.open(storeDir).then(() => true, () => false)
  await Store.init(storeDir)
  return { storeDir, workspace, created: !already, gitignoreUpdated: await ignoreStoreInGitignore(workspace, storeDir) }
}
