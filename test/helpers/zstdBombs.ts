import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { fileTransport } from '../../src/registry/transport/fileTransport.js'
import { buildPackedImage } from '../../src/registry/manifest/imageManifest.js'
import { sha256 } from '../../src/objects/digest.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { onePackIndex, writeOnePackFile } from './onePack.js'

/** RLE blocks of 128 KiB that make 4 GiB of zeros. */
export const FOUR_GIB_OF_ZEROS = 32 * 1024

/**
 * One zstd frame written by hand: `raw` as a raw block, then `zeroBlocks` RLE blocks of
 * 128 KiB of zeros (4 bytes each: 4 GiB of zeros cost 128 KiB), no content size, no checksum.
 */
export function zeroFrame(raw: Buffer, zeroBlocks: number): Buffer {
  const BLOCK = 128 * 1024
  const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]) // magic, no content size, a 128 KiB window
  const block = (type: number, size: number, last: boolean) => Buffer.from([((size << 3) | (type << 1) | Number(last)) & 0xff, (size >> 5) & 0xff, (size >> 13) & 0xff])
  const parts: Buffer[] = [header]
  if (raw.length > 0) parts.push(block(0, raw.length, zeroBlocks === 0), raw)
  for (let i = 0; i < zeroBlocks; i++) parts.push(block(1, BLOCK, i === zeroBlocks - 1), Buffer.from([0]))
  return Buffer.concat(parts)
}

/** A pack file of one object whose one frame is `frame`, written at `dir/bomb.fpk`. */
export function zstdBombPack(dir: string, frame: Buffer, object: Buffer): Promise<string> {
  return writeOnePackFile(join(dir, 'bomb.fpk'), frame, object)
}

/** The same pack as an image tagged `v1` in a file:// layout under `dir`. */
export async function zstdBombLayout(dir: string, frame: Buffer, object: Buffer): Promise<string> {
  const index = onePackIndex(frame, object)
  const layout = join(dir, 'layout')
  const transport = fileTransport(layout)
  const put = async (bytes: Buffer) => {
    const file = join(dir, 'blob')
    await fs.writeFile(file, bytes)
    await transport.putBlob({ digest: sha256(bytes), size: bytes.length }, file)
    return { digest: sha256(bytes), size: bytes.length }
  }
  const packs = [{ pack: await put(frame), index: await put(canonicalBytes(index)) }]
  const image = buildPackedImage({ root: sha256(object), packs, objects: 1, bytes: object.length, shallow: [] })
  await transport.putManifest(image.manifest)
  await transport.putManifest(image.index, 'v1')
  return `file://${layout}:v1`
}
