import { constants, promises as fs } from 'node:fs'
import { UnsupportedFileError } from '../../errors/index.js'
import { fsPath, readdirNames } from '../../util/fsName.js'
import { quotePath } from '../../world/diff/quotePath.js'
import type { IsHeldBack } from '../../world/checkout/heldBackGitPath.js'

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
  } else if (st.isFile()) {
    await fs.copyFile(fsPath(from), fsPath(to), constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE)
    if ((st.mode & 0o7000) !== 0) await fs.chmod(fsPath(to), st.mode & 0o777) // copyFile copies the whole mode
  } else {
    throw new UnsupportedFileError(`cannot commit ${quotePath(rel)}: it is a FIFO, socket or device, which a snapshot cannot hold (remove it from the branch)`, { path: rel })
  }
}
