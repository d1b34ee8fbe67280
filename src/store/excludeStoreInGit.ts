import { existsSync, promises as fs } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { readTextOrNull } from '../util/fsx.js'
import { addIgnoreLine } from './addIgnoreLine.js'
import { pathInside } from './ignoreStoreInGitignore.js'

/**
 * Add the store to the git repository's `info/exclude` when the workspace is in one, so
 * that `git status` does not list `.forkpoint/` and `git add -A` does not commit it:
 * `/PATH/` (the store's path from the repository's top) appended unless a line already
 * names it. For a workspace without a `.gitignore` of its own (`ignoreStoreInGitignore`
 * covers one that has it). The repository is the nearest directory up from the workspace
 * holding `.git`: a directory, or a `gitdir:` file (a worktree's or submodule's, whose
 * exclude file is the one in its common directory, as git reads it). Git is not run (the
 * workspace's `.git/config` may come from elsewhere) and no directory is created. Returns
 * whether the file changed.
 */
export async function excludeStoreInGit(workspace: string, storeDir: string): Promise<boolean> {
  const repo = await findGitRepository(workspace)
  const name = repo && pathInside(repo.top, storeDir)
  if (!repo || !name) return false
  const exclude = join(repo.commonDir, 'info', 'exclude')
  return addIgnoreLine(exclude, name, { create: existsSync(dirname(exclude)) })
}

async function findGitRepository(from: string): Promise<{ top: string; commonDir: string } | null> {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const gitDir = await gitDirAt(dir)
    if (gitDir) return { top: dir, commonDir: await commonDirOf(gitDir) }
    if (dirname(dir) === dir) return null
  }
}

/** The git directory `dir/.git` names: itself, or where its `gitdir:` line points. */
async function gitDirAt(dir: string): Promise<string | null> {
  const dotGit = join(dir, '.git')
  const st = await fs.lstat(dotGit).catch(() => null)
  if (st?.isDirectory()) return dotGit
  if (!st?.isFile()) return null
  const line = /^gitdir: (.+)$/m.exec((await readTextOrNull(dotGit)) ?? '')
  return line ? resolve(dir, line[1]!.trim()) : null
}

async function commonDirOf(gitDir: string): Promise<string> {
  const common = await readTextOrNull(join(gitDir, 'commondir'))
  return common === null ? gitDir : resolve(gitDir, common.trim())
}
