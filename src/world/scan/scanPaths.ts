import { lstatSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Store } from '../../store/Store.js'
import { fsPath, lstatPath, readdirEntries, readlinkName } from '../../util/fsName.js'
import { type IgnoreRules, ignoreRules } from './ignoreRules.js'
import { StoreDirectory } from './storeDirectory.js'
import { storeFile } from './storeFile.js'
import { type TreeEntry, dirEntry, fileEntry, symlinkEntry, treeObject } from '../../objects/Tree.js'

export interface ScanPathsOptions {
  store: Store
  /** The workspace root. */
  dir: string
  /** Relative, '/'-separated paths. */
  paths: string[]
  respectGitignore?: boolean | undefined
}

type Kind = { isDirectory(): boolean; isSymbolicLink(): boolean; isFile(): boolean }

/**
 * Scan only some paths of a workspace, as a full scan would see them: ignore rules of
 * every directory above applied, the store left out, symlinks never followed, files
 * hashed and stored (no stat cache: these are the few paths known to have changed), a
 * directory's trees stored. Each path maps to its tree entry, or to null when it is
 * absent, ignored, or not a file, directory or symlink. A caller splices them into an
 * older tree (`spliceTree`) to get the workspace's tree without a full rescan.
 */
export async function scanPaths({ store, dir, paths, respectGitignore = false }: ScanPathsOptions): Promise<Map<string, TreeEntry | null>> {
  const root = resolve(dir)
  const storeDir = new StoreDirectory(store.root)
  const out = new Map<string, TreeEntry | null>()
  const rulesOf = new Map<string, IgnoreRules | null>() // paths of one commit often share their directory
  for (const rel of paths) {
    const cut = rel.lastIndexOf('/')
    const [parent, name] = cut < 0 ? ['', rel] : [rel.slice(0, cut), rel.slice(cut + 1)]
    if (!rulesOf.has(parent)) rulesOf.set(parent, rulesInside(root, parent, storeDir, respectGitignore))
    const rules = rulesOf.get(parent)!
    const st = rules && lstatPath(`${root}/${rel}`)
    out.set(rel, rules && st ? await entryOf(store, storeDir, `${root}/${rel}`, rel, name, st, rules) : null)
  }
  return out
}

/** The entry for `name` (at `abs`) as seen from its parent directory, whose rules are `rules`; null when left out. */
async function entryOf(store: Store, storeDir: StoreDirectory, abs: string, rel: string, name: string, kind: Kind, rules: IgnoreRules): Promise<TreeEntry | null> {
  if (kind.isDirectory()) {
    if (storeDir.isAnyStore(abs, name) || rules.ignores(name, true)) return null
    const dirents = readdirEntries(abs)
    const inner = rules.enter(abs, rel, (file) => dirents.some((d) => d.name === file && d.dirent.isFile()))
    const entries: TreeEntry[] = []
    for (const { name: inside, dirent } of dirents) {
      const entry = await entryOf(store, storeDir, `${abs}/${inside}`, `${rel}/${inside}`, inside, dirent, inner)
      if (entry) entries.push(entry)
    }
    const { bytes, digest } = treeObject(entries)
    await store.writeVerified(digest, bytes)
    return dirEntry(name, digest)
  }
  if (kind.isSymbolicLink()) return rules.ignores(name, false) ? null : symlinkEntry(name, readlinkName(abs))
  if (!kind.isFile() || rules.ignores(name, false)) return null
  const st = lstatSync(fsPath(abs))
  const stored = await storeFile({ store, path: abs, size: st.size, write: true })
  return fileEntry(name, (st.mode & 0o111) !== 0, stored.size, stored.content, stored.chunked)
}

/** The rules in force inside directory `rel` (entering every directory from the root), or null when it is ignored, the store, or not a directory. */
function rulesInside(root: string, rel: string, storeDir: StoreDirectory, respectGitignore: boolean): IgnoreRules | null {
  const isFile = (abs: string) => (file: string) => lstatPath(`${abs}/${file}`)?.isFile() ?? false
  let rules = ignoreRules({ respectGitignore }).enter(root, '', isFile(root))
  let abs = root
  let here = ''
  for (const part of rel === '' ? [] : rel.split('/')) {
    if (rules.ignores(part, true)) return null
    abs = `${abs}/${part}`
    here = here ? `${here}/${part}` : part
    if (storeDir.isAnyStore(abs, part) || !lstatPath(abs)?.isDirectory()) return null
    rules = rules.enter(abs, here, isFile(abs))
  }
  return rules
}
