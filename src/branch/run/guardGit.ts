import { dirname, join } from 'node:path'
import { PinnedDirs } from '../../util/pinnedDirs.js'
import { removeUnder } from '../../util/removeAtAnyDepth.js'
import { settleInTurn } from '../../util/settleAll.js'
import type { IsHeldBack } from '../../world/checkout/heldBackGitPath.js'
import { readGitRunPaths } from '../../world/workspace/gitRunPaths.js'

const isDirectory = (signature: string): boolean => signature.startsWith('dir:')

const isGitDirectory = (path: string, signature: string): boolean => isDirectory(signature) && (path === '.git' || path.endsWith('/.git'))

/**
 * What a command run in the workspace itself (no branch) must not change: what git would run on the caller's next
 * git command, outside any sandbox (`held`). From the workspace's fingerprint before the run: every `.git` directory
 * is pinned (it cannot be renamed away and replaced), and every held path there (a `.git/config`, a hooks directory,
 * a `.git` file, a directory `core.hooksPath` names) is protected (read-only), each at the top of what it covers.
 * Paths are the workspace's.
 */
export function gitGuards(workspace: string, before: Map<string, string>, held: IsHeldBack): { pin: string[]; protect: string[] } {
  const pin: string[] = []
  const protect: string[] = []
  const guarded = [...before].filter(([path, signature]) => isGitDirectory(path, signature) || held(path, isDirectory(signature)))
  for (const [path, signature] of guarded.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (isGitDirectory(path, signature)) pin.push(join(workspace, path))
    else if (!protect.some((p) => join(workspace, path).startsWith(`${p}/`))) protect.push(join(workspace, path))
  }
  return { pin, protect }
}

/** The directories of the workspace holding a `.git` (a directory, or a worktree's or submodule's `gitdir:` file), from its fingerprint. */
export function repositoriesIn(before: Map<string, string>): string[] {
  return [...before.keys()].filter((path) => path === '.git' || path.endsWith('/.git')).map((path) => dirname(path))
}

/**
 * What the caller's git configuration runs in the repositories the command made (a `git init` under a global
 * `core.hooksPath = .githooks`): its own config is the command's, removed as made. Never throws: the command ran.
 */
export async function madeRunPaths(workspace: string, before: Map<string, string>, after: Map<string, string>): Promise<string[]> {
  const made = repositoriesIn(after).filter((dir) => !before.has(dir === '.' ? '.git' : `${dir}/.git`))
  return made.length === 0 ? [] : readGitRunPaths(workspace, { made }).catch(() => [])
}

/** A non-directory's inode number, from its fingerprint (`fingerprint.ts`); null for a directory. */
const inodeOf = (signature: string): string | null => (isDirectory(signature) ? null : signature.split(':')[1]!)

/**
 * Remove what the command made that git would run (a hook, a config, a `.git` file, at a new path or in place of the
 * one there before), keeping what was there before wherever the command moved it (the same inode: `gitGuards`
 * protects those, but a command can rename a directory holding a nested repository); returns one warning per path
 * removed.
 */
export async function removeMadeGitPaths({
  workspace,
  changed,
  before,
  after,
  held,
}: {
  workspace: string
  changed: string[]
  before: Map<string, string>
  after: Map<string, string>
  held: IsHeldBack
}): Promise<string[]> {
  const heldAt = (path: string, signature: string) => held(path, isDirectory(signature))
  const originals = new Set([...before].filter(([path, sig]) => heldAt(path, sig)).map(([, sig]) => inodeOf(sig)))
  const isOriginal = (path: string, signature: string) => originals.has(inodeOf(signature))
  const holdsOriginal = (dir: string) => [...after].some(([path, sig]) => path.startsWith(`${dir}/`) && isOriginal(path, sig))
  const made = (path: string, signature: string) => (isDirectory(signature) ? !before.has(path) && !holdsOriginal(path) : !isOriginal(path, signature))
  const toRemove: string[] = []
  for (const path of changed) {
    const signature = after.get(path)
    if (signature === undefined || !heldAt(path, signature) || toRemove.some((r) => path.startsWith(`${r}/`))) continue
    if (made(path, signature)) toRemove.push(path)
  }
  // through its directory held open, not followed by name; each whatever became of those before
  const dirs = await PinnedDirs.open(workspace)
  try {
    const done = await settleInTurn(
      toRemove.map((path) => async () => {
        const at = await dirs.parentOf(path)
        const removed = at !== null && (await removeUnder(at.dir, at.name, path))
        return removed ? [`removed ${path}, which the command made: git would run it on the next git command, outside the sandbox`] : []
      }),
    )
    return done.flat()
  } finally {
    await dirs.close()
  }
}
