import { ObjectNotFoundError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { scanPaths } from '../../world/scan/scanPaths.js'
import { IGNORE_FILES } from '../../world/scan/ignoreRules.js'
import { spliceTree } from '../../world/tree/spliceTree.js'
import { advanceBaseDir } from '../mount/baseDir.js'
import { committedPaths } from './committedPaths.js'

/** Files whose change can change what is ignored anywhere below them: after one, only a full rescan is right. */
const RULE_FILES = new Set<string>(IGNORE_FILES)

export interface Base {
  tree: Digest
  /** The workspace's commit count the tree stands for. */
  generation: number
}

/** A base found under the workspace lock, and what remains to do after it (nothing of which reads the workspace). */
export interface FoundBase extends Base {
  /** Make its new objects durable (and bring what depends on them up to date). */
  persist(): Promise<void>
}

/**
 * The base new branches start from after the commits made into the workspace since
 * `from`, up to commit `generation`: `from`'s tree with just the paths those commits
 * changed scanned again, and (on `persist`) its base directory changed at those paths. The cost
 * follows the commits, not the workspace. The caller holds the writer registration and
 * the workspace lock (so no commit is half applied), and may let the latter go before
 * `persist`. Null when that cannot be known (a commit's record is gone, an ignore file
 * changed, the old tree was collected): the caller rescans.
 */
export async function advanceBase({
  store,
  workspace,
  from,
  generation,
  respectGitignore,
}: {
  store: Store
  workspace: string
  from: Base
  generation: number
  respectGitignore?: boolean | undefined
}): Promise<FoundBase | null> {
  const paths = await committedPaths(store, from.generation, generation)
  if (paths === null || paths.some((p) => RULE_FILES.has(p.slice(p.lastIndexOf('/') + 1)))) return null
  const changes = await scanPaths({ store, dir: workspace, paths, respectGitignore })
  const tree = await spliceTree(store, from.tree, changes).catch((err: unknown) => {
    if (err instanceof ObjectNotFoundError) return null
    throw err
  })
  if (tree === null) return null
  const persist = async (): Promise<void> => {
    await store.sync() // the base directory links the new blobs: make them durable before a branch can copy them
    await advanceBaseDir(store, from.tree, tree, changes)
  }
  return { tree, generation, persist }
}
