import { openStore, type StoreLocator } from '../store/findStore.js'
import type { ShownObject } from '../store/showObject.js'
import { MAX_SHOWN_TEXT_BYTES, type ShownPath, showPath, splitPathSpec, textOf } from '../world/diff/showPath.js'
import { type ImageDescription, describeObject } from './describeImage.js'

/** A blob with its text when that is short UTF-8 (as a file of an image carries it). */
export type ShownBlob = Exclude<ShownObject, { object: unknown }> & { text: string | null }

export type Shown = ImageDescription | Extract<ShownObject, { object: unknown }> | ShownBlob | ShownPath

/**
 * What `forkpoint show SPEC` shows: `ID:PATH` a file, symlink or directory of an image's
 * tree (`ID:` its root); an image layer by layer; a blob with its text; any other object as stored.
 */
export async function showSpec({ id, ...locator }: StoreLocator & { id: string }): Promise<Shown> {
  const inImage = splitPathSpec(id)
  if (inImage) return showPath({ ...locator, ...inImage })
  const shown = await describeObject({ ...locator, id })
  if ('object' in shown) return shown
  const { store } = await openStore(locator)
  return { ...shown, text: shown.size > MAX_SHOWN_TEXT_BYTES ? null : textOf(await store.readBlob(shown.id)) }
}
