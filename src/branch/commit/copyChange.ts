import { constants, promises as fs } from 'node:fs'
import { FileWriteError, UnsupportedFileError } from '../../errors/index.js'
import { fsPath, readdirNames } from '../../util/fsName.js'
import { runTool, toolComplaint } from '../../util/runTool.js'
import { quotePath } from '../../world/diff/quotePath.js'
import type { IsHeldBack } from '../../world/checkout/heldBackGitPath.js'

/** A file with this many bytes more than it has on disk holds holes, which a plain copy would write out as zeros. */
const SPARSE_GAP = 1024 * 1024

/**
 * Copy what a branch put at `from` to `to` (which must not exist), as a snapshot records
 * it: directories with their entries, regular files with their permission bits (cloned
 * where the file system can), symlinks as their target; owned by the committer, with no
 * setuid, setgid or sticky bit (the branch's sandbox could set them, the host would
 * honour them). Names are bytes (fsName.ts), so none is lost on the way. A FIFO, socket
 * or device cannot be committed: refused, naming `rel`. With `holding`, what git would run
 * (`holding.held`) is not copied but listed in `holding.heldBack`; null copies it too (`trustGit`).
 */
export async function copyChange(from: string, to: string, rel: string, holding: { held: IsHeldBack; heldBack: string[] } | null): Promise<void> {
  const st = await fs.lstat(fsPath(from))
  if (holding?.held(rel, st.isDirectory())) {
    holding.heldBack.push(rel)
    return
  }
  if (st.isDirectory()) {
    await fs.mkdir(fsPath(to), st.mode & 0o777)
    for (const name of await readdirNames(from)) await copyChange(`${from}/${name}`, `${to}/${name}`, `${rel}/${name}`, holding)
  } else if (st.isSymbolicLink()) {
    await fs.symlink(await fs.readlink(fsPath(from), { encoding: 'buffer' }), fsPath(to))
  } else if (st.isFile() && st.size - st.blocks * 512 >= SPARSE_GAP) {
    await copySparse(from, to, rel)
    await fs.chmod(fsPath(to), st.mode & 0o777)
  } else if (st.isFile()) {
    await fs.copyFile(fsPath(from), fsPath(to), constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE)
    if ((st.mode & 0o7000) !== 0) await fs.chmod(fsPath(to), st.mode & 0o777) // copyFile copies the whole mode
  } else {
    throw new UnsupportedFileError(`cannot commit ${quotePath(rel)}: it is a FIFO, socket or device, which a snapshot cannot hold (remove it from the branch)`, { path: rel })
  }
}

/**
 * Copy a sparse file with its holes (`cp --sparse=always`, which finds them with SEEK_HOLE,
 * which Node cannot): `truncate -s 1T` in a branch costs its commit no more disk than it
 * cost the branch. Both files are opened here (`to` created new) and handed to `cp` as its
 * stdin and stdout, so names that are not UTF-8 reach it unchanged.
 */
async function copySparse(from: string, to: string, rel: string): Promise<void> {
  const source = await fs.open(fsPath(from), constants.O_RDONLY | constants.O_NOFOLLOW)
  try {
    const target = await fs.open(fsPath(to), 'wx', 0o600)
    try {
      const cp = await runTool(['cp', '--sparse=always', '/dev/stdin', '/dev/stdout'], source.fd, target.fd)
      if (cp.status !== 0) throw new FileWriteError(`cannot commit ${quotePath(rel)}: cp: ${toolComplaint(cp)}`, { path: rel, code: null })
    } finally {
      await target.close()
    }
  } finally {
    await source.close()
  }
}
