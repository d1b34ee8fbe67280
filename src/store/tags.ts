import { openStore, type StoreLocator } from './findStore.js'
import { ObjectNotFoundError, RefConflictError } from '../errors/index.js'
import { type Digest, shortId } from '../objects/digest.js'
import { deleteRef, listRefs, readRef, tagRef, updateRef } from './refs.js'
import { resolveId } from './resolveId.js'

export interface TagInfo {
  name: string
  id: Digest
}

/**
 * Point a new tag at an id (default HEAD). An existing tag is moved only with `force`
 * (git's `tag -f`), and the move is logged; without it, a tag already at another id is a
 * RefConflictError (exit 3) and one already at this id is left as it is.
 */
export async function createTag({ name, id = 'HEAD', force = false, ...locator }: StoreLocator & { name: string; id?: string; force?: boolean }): Promise<TagInfo> {
  const { store } = await openStore(locator)
  const target = await resolveId(store, id)
  const current = await readRef(store, tagRef(name))
  if (current === target) return { name, id: target }
  if (current !== null && !force) {
    throw new RefConflictError(`tag ${name} already exists at ${shortId(current)}: use 'forkpoint tag -f ${name} ${id}' to move it`, {
      ref: tagRef(name),
      actual: current,
      expected: null,
    })
  }
  await updateRef({ store, name: tagRef(name), id: target, message: `tag ${name}`, ...(force ? {} : { expected: null }) })
  return { name, id: target }
}

export async function deleteTag({ name, ...locator }: StoreLocator & { name: string }): Promise<void> {
  const { store } = await openStore(locator)
  if (!(await deleteRef(store, tagRef(name)))) throw new ObjectNotFoundError(`no tag ${name}`, { name })
}

export async function listTags(locator: StoreLocator = {}): Promise<TagInfo[]> {
  const { store } = await openStore(locator)
  return (await listRefs(store, 'refs/tags/')).map((r) => ({ name: r.name.slice('refs/tags/'.length), id: r.id }))
}
