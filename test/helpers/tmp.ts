import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, promises as fs } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll } from 'vitest'

const made: string[] = []
afterAll(removeTempDirs)

/**
 * Remove the directories tempDir() made. Registered once on import; the unit project (isolate: false) imports
 * this module once a worker, so its setup file (unitTierGuard.ts) registers it again for each file.
 */
export async function removeTempDirs(): Promise<void> {
  const dirs = made.splice(0)
  detachMountsUnder(dirs)
  // `rm -rf` where Node's rm stops: at a path longer than PATH_MAX that a test's sandboxed work made
  await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true }).catch(() => spawnSync('rm', ['-rf', d]))))
}

/**
 * A branch a test left live is mounted where every tool sees it (docs/branch-paths.md), and
 * a mount point cannot be removed: detach what is mounted under the test's directories first.
 */
function detachMountsUnder(dirs: string[]): void {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined && dirs.some((d) => point.startsWith(`${d}/`)))
  for (const point of points.reverse()) {
    if (spawnSync('umount', ['-l', point]).status !== 0) spawnSync('fusermount3', ['-u', '-z', point])
  }
}

/** A fresh temporary directory, removed after the test file. */
export function tempDir(label = 'fp'): string {
  const dir = mkdtempSync(join(tmpdir(), `${label}-`))
  made.push(dir)
  return dir
}

export type FileSpec = string | Buffer | { content: string | Buffer; mode?: number } | { symlink: string } | { dir: true }

/** Build a workspace from a map of relative paths: `{ 'a.txt': 'hi', 'bin/x': { content, mode: 0o755 } }`. */
export async function makeWorkspace(files: Record<string, FileSpec>, dir = tempDir('ws')): Promise<string> {
  for (const [rel, spec] of Object.entries(files)) {
    const path = join(dir, rel)
    await fs.mkdir(dirname(path), { recursive: true })
    if (typeof spec === 'string' || Buffer.isBuffer(spec)) await fs.writeFile(path, spec)
    else if ('symlink' in spec) await fs.symlink(spec.symlink, path)
    else if ('dir' in spec) await fs.mkdir(path, { recursive: true })
    else {
      await fs.writeFile(path, spec.content)
      if (spec.mode !== undefined) await fs.chmod(path, spec.mode)
    }
  }
  return dir
}
