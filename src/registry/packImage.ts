import { createWriteStream, promises as fs } from 'node:fs'
import { resolve } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Header as TarHeader } from 'tar'
import { type Digest, digestHex } from '../store/digest.js'
import { resolveId } from '../store/resolveId.js'
import { createVerifiedReadStream } from '../store/verifiedRead.js'
import type { Store } from '../store/Store.js'
import { tempSibling } from '../util/atomicWrite.js'
import { requirePackage } from '../util/requirePackage.js'
import { canonicalBytes } from '../util/canonicalJson.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { collectImage } from './collectImage.js'
import type { BlobRef } from './Descriptor.js'
import { PACK_MANIFEST_NAME, type PackManifest } from './PackManifest.js'

export interface PackArgs extends StoreLocator {
  /** A snapshot id, short id, head, tag or `HEAD~N`. */
  id: string
  /** The pack file to write (replaced atomically). */
  output: string
  /** zstd level, 1 to 19. */
  level?: number
}

export interface PackResult {
  id: Digest
  output: string
  objects: number
  /** Bytes of the objects, and of the compressed pack. */
  bytes: number
  packBytes: number
}

const EPOCH = new Date(0)

/**
 * Write an image as one file: a tar of `forkpoint-pack.json` (root and object list) and
 * `objects/sha256/<hex>` for every object, in digest order with fixed owners, modes and
 * times, compressed with zstd. The same image always gives the same bytes.
 */
export async function packImage({ id, output, level = 3, ...where }: PackArgs): Promise<PackResult> {
  const { store } = await openStore(where)
  const root = await resolveId(store, id)
  const objects = (await collectImage(store, root)).sort((a, b) => (a.digest < b.digest ? -1 : 1))
  const manifest: PackManifest = { kind: 'pack', schemaVersion: 1, root, objects }
  const target = resolve(output)
  const tmp = tempSibling(target)
  // tar and zstd are loaded here, not with the library: most callers never pack
  const { Header } = requirePackage('tar') as typeof import('tar')
  const { CompressStream } = requirePackage('zstd-napi') as typeof import('zstd-napi')
  const header = (path: string, size: number) => tarHeader(Header, path, size)
  try {
    // the frame checksum lets unpack catch a damaged byte anywhere, tar padding included
    await pipeline(Readable.from(tarEntries(store, header, canonicalBytes(manifest), objects)), new CompressStream({ compressionLevel: level, checksumFlag: true }), createWriteStream(tmp))
    await fs.rename(tmp, target)
  } finally {
    await fs.rm(tmp, { force: true })
  }
  return { id: root, output: target, objects: objects.length, bytes: objects.reduce((n, o) => n + o.size, 0), packBytes: (await fs.stat(target)).size }
}

function tarHeader(Header: typeof TarHeader, path: string, size: number): Buffer {
  const h = new Header({ path, size, mode: 0o444, uid: 0, gid: 0, uname: '', gname: '', mtime: EPOCH, type: 'File' })
  h.encode()
  return h.block!
}

function padding(size: number): Buffer {
  return Buffer.alloc((512 - (size % 512)) % 512)
}

async function* tarEntries(store: Store, header: (path: string, size: number) => Buffer, manifest: Buffer, objects: BlobRef[]): AsyncGenerator<Buffer> {
  yield header(PACK_MANIFEST_NAME, manifest.length)
  yield manifest
  yield padding(manifest.length)
  for (const object of objects) {
    yield header(`objects/sha256/${digestHex(object.digest)}`, object.size)
    for await (const chunk of createVerifiedReadStream(store.objectPath(object.digest), object)) yield chunk as Buffer
    yield padding(object.size)
  }
  yield Buffer.alloc(1024) // two zero blocks end the archive
}
