import { promises as fs } from 'node:fs'
import { resolve } from 'node:path'
import { UsageError } from '../../errors/index.js'
import { isInside } from '../../util/isInside.js'

/**
 * Make a branch at `path` (`--path`), when one is asked for: an empty directory outside
 * the workspace (a branch inside would be scanned into its own workspace's snapshots),
 * made when missing and removed again when `make` fails.
 * @throws {UsageError}
 */
export async function atBranchPath<T>(path: string | undefined, workspace: string, make: (path: string | undefined) => Promise<T>): Promise<T> {
  if (path === undefined) return make(undefined)
  const wanted = resolve(path)
  const made = await fs.mkdir(wanted, { recursive: true }).catch((err: Error) => {
    throw new UsageError(`cannot make the branch path ${wanted}: ${err.message}`, { path: wanted })
  })
  try {
    return await make(await checked(wanted, workspace))
  } catch (err) {
    if (made !== undefined) await fs.rm(made, { recursive: true }).catch(() => undefined)
    throw err
  }
}

async function checked(wanted: string, workspace: string): Promise<string> {
  const [real, realWorkspace] = await Promise.all([fs.realpath(wanted), fs.realpath(workspace)])
  if (isInside(realWorkspace, real)) throw new UsageError(`the branch path ${wanted} is inside the workspace ${workspace}: choose a directory outside it`, { path: wanted })
  const entries = await fs.readdir(real).catch(() => null)
  if (entries === null) throw new UsageError(`the branch path ${wanted} is not a directory`, { path: wanted })
  if (entries.length > 0) throw new UsageError(`the branch path ${wanted} is not empty`, { path: wanted })
  return real
}
