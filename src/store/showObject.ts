import { openStore, type StoreLocator } from './findStore.js'
import type { Digest } from '../objects/digest.js'
import { resolveId } from './resolveId.js'
import { parseStructured } from './Store.js'
import type { StructuredObject } from '../objects/StructuredObject.js'

export type ShownObject = { id: Digest; kind: 'blob'; size: number } | { id: Digest; kind: string; size: number; object: StructuredObject }

/** Any object by id or prefix: structured objects parsed, blobs described by size. */
export async function showObject({ id, ...locator }: StoreLocator & { id: string }): Promise<ShownObject> {
  const { store } = await openStore(locator)
  const digest = await resolveId(store, id)
  const bytes = await store.readBlob(digest)
  if (bytes[0] === 0x7b) {
    try {
      const object = parseStructured(bytes, digest)
      return { id: digest, kind: object.kind, size: bytes.length, object }
    } catch {
      // JSON-looking user data: it is a blob like any other
    }
  }
  return { id: digest, kind: 'blob', size: bytes.length }
}
