import { promises as fs } from 'node:fs'
import { relative, resolve, isAbsolute } from 'node:path'
import { UsageError } from '../errors/index.js'

/**
 * The directory a branch is to be mounted at (`--path`), made when missing: it must be an
 * empty directory outside the workspace (a branch inside would be scanned into its own
 * workspace's snapshots).
 * @throws {UsageError}
 */
export async function prepareBranchPath(path: string, workspace: string): Promise<string> {
  const wanted = resolve(path)
  await fs.mkdir(wanted, { recursive: true }).catch((err: Error) => {
    throw new UsageError(`cannot make the branch path ${wanted}: ${err.message}`, { path: wanted })
  })
  const [real, realWorkspace] = await Promise.all([fs.realpath(wanted), fs.realpath(workspace)])
  const rel = relative(realWorkspace, real)
  if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) throw new UsageError(`the branch path ${wanted} is inside the workspace ${workspace}: choose a directory outside it`, { path: wanted })
  const entries = await fs.readdir(real).catch(() => null)
  if (entries === null) throw new UsageError(`the branch path ${wanted} is not a directory`, { path: wanted })
  if (entries.length > 0) throw new UsageError(`the branch path ${wanted} is not empty`, { path: wanted })
  return real
}
