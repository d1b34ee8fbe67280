import { promises as fs } from 'node:fs'
import { encodeHeader } from '../../src/registry/pack/packFile.js'
import { sha256 } from '../../src/objects/digest.js'
import type { PackIndex } from '../../src/store/PackIndex.js'

/** The index of a pack of one object (`object`, the image's root) whose one frame is `frame`, honest or not. */
export function onePackIndex(frame: Buffer, object: Buffer): PackIndex {
  return {
    kind: 'pack-index',
    schemaVersion: 1,
    pack: sha256(frame),
    packSize: frame.length,
    frames: [[frame.length, object.length]],
    objects: [[sha256(object), 0, object.length]],
  }
}

/** Write a pack file of one object (`object`, the image's root) whose one frame is `frame`, at `file`. */
export async function writeOnePackFile(file: string, frame: Buffer, object: Buffer): Promise<string> {
  const header = encodeHeader({ kind: 'pack', schemaVersion: 2, root: sha256(object), shallow: [], index: onePackIndex(frame, object) })
  await fs.writeFile(file, Buffer.concat([header, frame]))
  return file
}
