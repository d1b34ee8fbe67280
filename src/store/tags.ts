import { ObjectNotFoundError } from '../errors/index.js'
import type { Digest } from './digest.js'
import { deleteRef, listRefs, tagRef, updateRef } from './refs.js'
import { resolveId } from './resolveId.js'
import type { Store } from './Store.js'

export interface TagInfo {
  name: string
  id: Digest
}

/** Point a tag at an id (default HEAD); moving an existing tag is allowed and logged. */
export async function createTag({ store, name, id = 'HEAD' }: { store: Store; name: string; id?: string }): Promise<TagInfo> {
  const target = await resolveId(store, id)
  await updateRef({ store, name: tagRef(name), id: target, message: `tag ${name}` })
  return { name, id: target }
}

export async function deleteTag({ store, name }: { store: Store; name: string }): Promise<void> {
  if (!(await deleteRef(store, tagRef(name)))) throw new ObjectNotFoundError(`no tag ${name}`, { name })
}

export async function listTags({ store }: { store: Store }): Promise<TagInfo[]> {
  return (await listRefs(store, 'refs/tags/')).map((r) => ({ name: r.name.slice('refs/tags/'.length), id: r.id }))
}
