import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A directory on a reflink-capable file system for the reflink backend's tests: the one
 * in FORKPOINT_REFLINK_DIR, or (as root) a small XFS image mounted on a loop device,
 * created here and removed by the returned cleanup. Not root and no directory given is an
 * error, not a skip: run the suite as root (as CI does), which also runs it unprivileged.
 */
export function reflinkDir(): { dir: string; cleanup: () => void } {
  const given = process.env['FORKPOINT_REFLINK_DIR']
  if (given) return { dir: given, cleanup: () => undefined }
  if (process.getuid?.() !== 0) throw new Error('the reflink backend tests need root (to mount an XFS image) or FORKPOINT_REFLINK_DIR')
  const root = mkdtempSync(join(tmpdir(), 'fp-xfs-'))
  execFileSync('chmod', ['755', root])
  const image = join(root, 'xfs.img')
  const mnt = join(root, 'mnt')
  execFileSync('truncate', ['-s', '320M', image])
  execFileSync('mkfs.xfs', ['-q', '-m', 'reflink=1', image])
  execFileSync('mkdir', [mnt])
  execFileSync('mount', ['-o', 'loop', image, mnt])
  execFileSync('chmod', ['1777', mnt])
  return {
    dir: mnt,
    cleanup: () => {
      execFileSync('umount', ['-l', mnt])
      rmSync(root, { recursive: true, force: true })
    },
  }
}
