import { createReadStream, createWriteStream, promises as fs } from 'node:fs'
import { resolve } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { Digest } from '../../objects/digest.js'
import { resolveId } from '../../store/resolveId.js'
import { tempSibling } from '../../util/atomicWrite.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { collectImage } from '../transfer/collectImage.js'
import { encodeHeader } from './packFile.js'
import { openPackWriter } from './writePack.js'

export interface PackArgs extends StoreLocator {
  /** A snapshot id, short id, head, tag or `HEAD~N`. */
  id: string
  /** The pack file to write (replaced atomically). */
  output: string
  /** zstd level, 1 to 19. */
  level?: number
  /** The snapshot's history only this many snapshots deep (1: the snapshot alone). */
  depth?: number
}

export interface PackResult {
  id: Digest
  output: string
  objects: number
  /** Bytes of the objects, and of the compressed pack. */
  bytes: number
  packBytes: number
  shallow: Digest[]
}

/**
 * Write an image as one file: the same pack a push sends (structured objects, then file
 * contents, in zstd frames, with an index), preceded by a header naming the root (see packFile.ts).
 * The same image always gives the same bytes.
 */
export async function packImage({ id, output, level = 3, depth, ...where }: PackArgs): Promise<PackResult> {
  const { store } = await openStore(where)
  const root = await resolveId(store, id)
  const target = resolve(output)
  const body = tempSibling(target)
  const tmp = tempSibling(target)
  const writer = openPackWriter(store, { level })
  try {
    // file contents are packed as the walk finds them
    const { objects, shallow, structured } = await collectImage(store, root, { depth, onContent: (digest, size) => writer.addContent({ digest, size }) })
    const pack = await writer.finish(
      body,
      objects.filter((o) => structured.has(o.digest)),
    )
    const header = encodeHeader({ kind: 'pack', schemaVersion: 2, root, shallow, index: pack.index })
    await pipeline(Readable.from(concat(header, body)), createWriteStream(tmp))
    await fs.rename(tmp, target)
    return { id: root, output: target, objects: objects.length, bytes: objects.reduce((n, o) => n + o.size, 0), packBytes: (await fs.stat(target)).size, shallow }
  } finally {
    await Promise.all([writer.close(), fs.rm(tmp, { force: true }), fs.rm(body, { force: true })])
  }
}

async function* concat(header: Buffer, body: string): AsyncGenerator<Buffer> {
  yield header
  for await (const chunk of createReadStream(body)) yield chunk as Buffer
}
