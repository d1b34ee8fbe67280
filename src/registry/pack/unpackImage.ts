import { createReadStream, promises as fs } from 'node:fs'
import { resolve } from 'node:path'
import { InvalidPackError } from '../../errors/index.js'
import { type Digest, shortId } from '../../objects/digest.js'
import { readRef, tagRef, updateRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { withWriteLock } from '../../store/storeLock.js'
import { statInput } from '../../util/statInput.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { checkImage } from '../transfer/checkImage.js'
import { recordShallow, shallowToDeepen } from '../transfer/recordShallow.js'
import { recordForeignImage } from '../../store/foreignImages.js'
import { type Limits, resolveLimits } from './limits.js'
import { HEADER_PREFIX_BYTES, SKIPPABLE_MAGIC, headerLength, parseHeader } from './packFile.js'
import { assertTag } from '../transport/parseRemote.js'
import { Staging } from '../transfer/Staging.js'
import { stagePackedObjects } from '../transfer/stagePackedObjects.js'

export interface UnpackArgs extends StoreLocator {
  /** The pack file. */
  input: string
  /** The local tag to point at the image (default `unpacked-<id>`). */
  tag?: string
  /** Caps on sizes read from the pack (default: environment, then DEFAULT_LIMITS). */
  limits?: Partial<Limits>
  allowExternalSymlinks?: boolean
}

export interface UnpackResult {
  id: Digest
  tag: string
  objects: number
  /** Objects the store did not have yet. */
  added: number
  shallow: Digest[]
}

interface Unpacked {
  root: Digest
  objects: number
  shallow: Digest[]
}

/**
 * Read a pack file into the store: its header and index are checked (frames tile the
 * pack, entries do not overlap, the file is exactly as long as declared), the frames
 * holding objects the store lacks are decompressed no further than they declare, every
 * object is checked against its digest, staged, the whole image checked, and only then
 * moved into the store. Anything wrong is refused (exit 5) with the store unchanged.
 */
export async function unpackImage({ input, tag, limits, allowExternalSymlinks = false, ...where }: UnpackArgs): Promise<UnpackResult> {
  const { store } = await openStore(where)
  const file = resolve(input)
  const st = await statInput(file)
  const caps = resolveLimits(limits)
  const staging = await Staging.open(store, `unpack\0${file}\0${st.size}\0${st.mtimeMs}`)
  try {
    const image = await readPackFile(store, staging, file, caps)
    const deepen = await shallowToDeepen(store, image.shallow)
    const { order } = await checkImage({ root: image.root, describe: (d) => staging.describe(d), allowExternalSymlinks, shallow: new Set(image.shallow), deepen, limits: caps })
    const name = assertTag(tag ?? `unpacked-${shortId(image.root)}`)
    let added = 0
    await withWriteLock(store, async () => {
      added = await staging.commit(order, new Set(image.shallow))
      await recordShallow(store, image.shallow, deepen)
      await recordForeignImage(store, image.root)
      await store.sync()
      if ((await readRef(store, tagRef(name))) !== image.root) {
        await updateRef({ store, name: tagRef(name), id: image.root, message: `unpack ${file}` })
      }
    })
    return { id: image.root, tag: name, objects: image.objects, added, shallow: image.shallow }
  } finally {
    await staging.discard()
  }
}

/** Stage a pack file's objects. */
async function readPackFile(store: Store, staging: Staging, file: string, limits: Limits): Promise<Unpacked> {
  const handle = await fs.open(file, 'r')
  let prefix: Buffer
  let size: number
  try {
    size = (await handle.stat()).size
    prefix = Buffer.alloc(HEADER_PREFIX_BYTES)
    await handle.read(prefix, 0, HEADER_PREFIX_BYTES, 0)
    if (size < HEADER_PREFIX_BYTES) throw new InvalidPackError(`${file} is not a valid pack (truncated or damaged): ${size} bytes`, { file })
    if (prefix.readUInt32LE(0) !== SKIPPABLE_MAGIC) throw new InvalidPackError(`${file} is not a forkpoint pack`, { file })
    const length = headerLength(prefix, file, limits)
    const body = Buffer.alloc(length)
    const { bytesRead } = await handle.read(body, 0, length, HEADER_PREFIX_BYTES)
    if (bytesRead < length) throw new InvalidPackError(`${file} is not a valid pack (truncated or damaged): it ends inside its header`, { file })
    const { root, shallow, index } = parseHeader(body, file, limits)
    const base = HEADER_PREFIX_BYTES + length
    if (size !== base + index.packSize) {
      const what = size > base + index.packSize ? 'bigger than its header declares' : 'truncated or damaged'
      throw new InvalidPackError(`${file} is not a valid pack (${what}): ${size - base} bytes of frames, not ${index.packSize}`, { file })
    }
    const source = {
      where: file,
      open: async (offset: number, len: number) => ({ offset, body: createReadStream(file, { start: base + offset, end: base + offset + len - 1 }) }),
    }
    await stagePackedObjects({ store, staging, packs: [{ index, source }], limits, where: `pack ${file}` })
    return { root, objects: index.objects.length, shallow }
  } finally {
    await handle.close()
  }
}
