import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Store, initWorkspace } from '../../src/index.js'
import { listObjects } from '../../src/store/objectGraph.js'
import { type FileSpec, makeWorkspace, tempDir } from './tmp.js'

/** A workspace built from `files` with its own store (`.forkpoint/`) initialised. */
export async function storeWorkspace(files: Record<string, FileSpec> = {}): Promise<{ dir: string; store: Store }> {
  const dir = await makeWorkspace(files, tempDir('ws'))
  const { storeDir } = await initWorkspace({ dir })
  return { dir, store: await Store.open(storeDir) }
}

export async function countObjects(store: Store): Promise<number> {
  return (await listObjects(store)).length
}

/** What a directory holds, path by path: type, permission bits, bytes or link target. */
export type DirState = Record<string, { type: 'file'; mode: number; content: string } | { type: 'symlink'; target: string } | { type: 'dir'; mode: number }>

/** Read a directory tree without following symlinks; `skip` names top-level entries to leave out. */
export async function dirState(root: string, skip: string[] = ['.forkpoint']): Promise<DirState> {
  const out: DirState = {}
  const walk = async (rel: string): Promise<void> => {
    for (const e of await fs.readdir(join(root, rel), { withFileTypes: true })) {
      if (!rel && skip.includes(e.name)) continue
      const path = rel ? `${rel}/${e.name}` : e.name
      const abs = join(root, path)
      const st = await fs.lstat(abs)
      if (st.isSymbolicLink()) out[path] = { type: 'symlink', target: await fs.readlink(abs) }
      else if (st.isDirectory()) {
        out[path] = { type: 'dir', mode: st.mode & 0o777 }
        await walk(path)
      } else out[path] = { type: 'file', mode: st.mode & 0o777, content: (await fs.readFile(abs)).toString('base64') }
    }
  }
  await walk('')
  return out
}

/** Entries of a directory, or null when it does not exist. */
export async function listOrNull(dir: string): Promise<string[] | null> {
  return fs.readdir(dir).catch(() => null)
}
