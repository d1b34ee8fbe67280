import { execFile } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BackendUnavailableError } from '../../errors/index.js'
import { mountStatus } from './hostMount.js'

const exec = promisify(execFile)

/** The file system image holding a capped branch's upper layer, and where it is mounted. */
const image = (dir: string) => join(dir, 'disk.img')
const mountPoint = (dir: string) => join(dir, 'disk')

/**
 * Give the branch directory `dir` an upper layer capped at `bytes`: a sparse file holding an
 * ext4 file system, loop-mounted `nosuid,nodev` at `disk/`, with `upper` and `work` links into
 * it where the overlay looks for them. Writes past the cap fail with ENOSPC inside the branch,
 * and the workspace's own file system never fills. Root only (a loop mount).
 * @throws {BackendUnavailableError} no mkfs.ext4, loop device or mount here
 */
export async function makeBranchDisk(dir: string, bytes: number): Promise<void> {
  try {
    await fs.writeFile(image(dir), '')
    await fs.truncate(image(dir), bytes)
    await exec('mkfs.ext4', ['-q', '-F', '-O', '^has_journal', '-m', '0', image(dir)])
    await fs.mkdir(mountPoint(dir))
    await mountBranchDisk(dir)
  } catch (err) {
    const why = (err as { stderr?: string }).stderr?.trim() || (err as Error).message
    throw new BackendUnavailableError(`cannot make a ${bytes}-byte disk for the branch (mkfs.ext4 and a loop mount): ${why}`, { cause: why })
  }
  for (const layer of ['upper', 'work'] as const) {
    await fs.mkdir(join(mountPoint(dir), layer))
    await fs.symlink(join('disk', layer), join(dir, layer))
  }
}

/** Mount the branch's disk again where it is gone (after a reboot); a mounted one is left as it is. */
export async function reviveBranchDisk(dir: string): Promise<void> {
  if (mountStatus(mountPoint(dir)) !== 'mounted') await mountBranchDisk(dir)
}

/** Unmount the branch's disk (lazily: its overlay went first); its image goes with the branch directory. */
export async function unmountBranchDisk(dir: string): Promise<void> {
  if (mountStatus(mountPoint(dir)) === 'mounted') await exec('umount', ['-l', mountPoint(dir)])
}

function mountBranchDisk(dir: string): Promise<unknown> {
  return exec('mount', ['-o', 'loop,nosuid,nodev', image(dir), mountPoint(dir)])
}
