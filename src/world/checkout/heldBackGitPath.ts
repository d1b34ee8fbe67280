/**
 * The names under a `.git` directory that git reads its configuration from (`config.worktree` with
 * `extensions.worktreeConfig`), or that send it to another directory for its configuration (`commondir`).
 */
const CONFIG_NAMES = new Set(['config', 'config.worktree', 'commondir'])

/**
 * Whether what is at `path` makes git run something or look elsewhere, so that it is held back from what came from
 * somewhere forkpoint does not trust (another store's image, a branch's sandboxed work): under a `.git` directory at
 * any depth, every `config`, `config.worktree` or `commondir` (a `core.fsmonitor`, `core.hooksPath` or filter runs
 * on the next `git status`) and everything under a `hooks` directory (a submodule's in `.git/modules/` too); and a `.git` that is
 * not a directory (a file or symlink points git at another directory). Git itself refuses `.git` in its trees for this
 * reason.
 */
export function isHeldBackGitPath(path: string, isDirectory: boolean): boolean {
  const names = path.split('/')
  const git = names.indexOf('.git')
  if (git === -1) return false
  const inside = names.slice(git + 1)
  if (inside.length === 0) return !isDirectory
  return inside.includes('hooks') || CONFIG_NAMES.has(inside[inside.length - 1]!)
}

/** A test of what is held back: a path, and whether what is there is a directory. */
export type IsHeldBack = (path: string, isDirectory: boolean) => boolean

/**
 * What is held back in a workspace whose git configuration runs `runPaths` (`readGitRunPaths`): what
 * `isHeldBackGitPath` holds back, each of `runPaths` with what is under it, and a non-directory in place of a
 * directory holding one of them (a symbolic link there would send git to files written elsewhere).
 */
export function heldBackWith(runPaths: readonly string[]): IsHeldBack {
  if (runPaths.length === 0) return isHeldBackGitPath
  return (path, isDirectory) =>
    isHeldBackGitPath(path, isDirectory) || runPaths.some((run) => path === run || path.startsWith(`${run}/`) || (!isDirectory && run.startsWith(`${path}/`)))
}
