import type { Digest, Store, TreeEntry } from '../../src/index.js'
import { readTree } from '../../src/world/tree/readObjects.js'
import { dirEntry, fileEntry, treeObject } from '../../src/objects/Tree.js'

/** A flat description of a tree of files: path -> contents. */
export type FlatFiles = Record<string, string | Buffer>

/** The tree of `files` written to the store (directories made on the way). */
export async function writeFlat(store: Store, files: FlatFiles, prefix = ''): Promise<Digest> {
  const below = Object.keys(files).filter((p) => p.startsWith(prefix))
  const names = new Set(below.map((p) => p.slice(prefix.length).split('/')[0]!))
  const entries: TreeEntry[] = []
  for (const name of names) {
    const content = files[prefix + name]
    if (content === undefined) entries.push(dirEntry(name, await writeFlat(store, files, `${prefix}${name}/`)))
    else entries.push(fileEntry(name, false, Buffer.byteLength(content), await store.writeBlob(Buffer.from(content)), false))
  }
  const { digest, bytes } = treeObject(entries)
  await store.writeVerified(digest, bytes)
  return digest
}

/** The files of a tree, path -> contents as text (`<dir>` for an empty directory). */
export async function readFlat(store: Store, tree: Digest, prefix = ''): Promise<Record<string, string>> {
  const flat: Record<string, string> = {}
  const entries = (await readTree(store, tree)).entries
  for (const e of entries) {
    if (e.type === 'dir') {
      const inside = await readFlat(store, e.tree, `${prefix}${e.name}/`)
      Object.assign(flat, Object.keys(inside).length > 0 ? inside : { [`${prefix}${e.name}`]: '<dir>' })
    } else if (e.type === 'file' && 'blob' in e) flat[prefix + e.name] = (await store.readBlob(e.blob)).toString('latin1')
  }
  return flat
}
