import { createWriteStream, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { InvalidImageError } from '../../errors/index.js'
import { acquireLock } from '../../store/lockFile.js'
import { createVerifiedReadStream } from '../../store/verifiedRead.js'
import { type Digest, digestHex, isDigest } from '../../objects/digest.js'
import { atomicWrite, tempSibling } from '../../util/atomicWrite.js'
import type { z } from 'zod'
import type { BuiltManifest } from '../manifest/imageManifest.js'
import { type Limits, DEFAULT_LIMITS, raiseHint } from '../pack/limits.js'
import { MediaType, REF_NAME_ANNOTATION } from '../manifest/mediaTypes.js'
import { layoutIndexSchema, parseUntrusted } from '../manifest/ociSchemas.js'
import { openRegularFile, readRegularFile } from './openRegularFile.js'
import type { BlobStream, TransferOptions, Transport } from './Transport.js'
import { parseStrictJson } from '../../util/strictJson.js'

type LayoutIndex = z.infer<typeof layoutIndexSchema>

/**
 * `file:///path`: an OCI image layout directory (`oci-layout`, `index.json`,
 * `blobs/sha256/…`), readable by standard OCI tools. Tags are index.json entries with an
 * `org.opencontainers.image.ref.name` annotation; index.json changes under a lock file.
 */
export function fileTransport(root: string, limits: Limits = DEFAULT_LIMITS): Transport {
  const blobPath = (digest: Digest) => join(root, 'blobs', 'sha256', digestHex(digest))
  const indexPath = join(root, 'index.json')

  async function ensureLayout(): Promise<void> {
    await fs.mkdir(join(root, 'blobs', 'sha256'), { recursive: true })
    if ((await fs.lstat(join(root, 'oci-layout')).catch(() => null)) === null) {
      await atomicWrite(join(root, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}')
    }
  }

  const readSmall = (path: string, what: string) => readRegularFile(path, limits.maxManifestBytes, what, raiseHint('maxManifestBytes'))

  async function readIndex(): Promise<LayoutIndex> {
    const bytes = await readSmall(indexPath, 'the layout index')
    return bytes === null ? { schemaVersion: 2, mediaType: MediaType.index, manifests: [] } : parseLayoutIndex(bytes, indexPath)
  }

  async function writeBlobFrom(digest: Digest, write: (tmp: string) => Promise<void>): Promise<void> {
    await ensureLayout()
    const target = blobPath(digest)
    const tmp = tempSibling(target)
    try {
      await write(tmp)
      await fs.rename(tmp, target)
    } finally {
      await fs.rm(tmp, { force: true })
    }
  }

  async function statBlob(digest: Digest): Promise<number | null> {
    const handle = await openRegularFile(blobPath(digest))
    if (handle === null) return null
    try {
      return (await handle.stat()).size
    } finally {
      await handle.close()
    }
  }

  return {
    location: `file://${root}`,
    statBlob,
    async putBlob(blob, source, { signal, onBytes }: TransferOptions = {}) {
      await writeBlobFrom(blob.digest, (tmp) => pipeline(createVerifiedReadStream(source, blob, { onBytes }), createWriteStream(tmp), { signal }))
    },
    async openBlob(digest, offset, { length }: { length?: number } = {}): Promise<BlobStream | null> {
      const handle = await openRegularFile(blobPath(digest))
      if (handle === null) return null
      const start = Math.min(offset, (await handle.stat()).size)
      return { offset: start, body: handle.createReadStream(length === undefined ? { start } : { start, end: start + length - 1 }) }
    },
    async putManifest({ descriptor, bytes }: BuiltManifest, tag?: string) {
      await writeBlobFrom(descriptor.digest, (tmp) => fs.writeFile(tmp, bytes))
      if (tag === undefined) return
      const lock = await acquireLock(`${indexPath}.lock`, { what: `the layout index ${indexPath}` })
      try {
        const index = await readIndex()
        index.manifests = index.manifests.filter((m) => m.annotations?.[REF_NAME_ANNOTATION] !== tag)
        index.manifests.push({ ...descriptor, annotations: { [REF_NAME_ANNOTATION]: tag } })
        await atomicWrite(indexPath, `${JSON.stringify(index, null, 2)}\n`, { fsync: true })
      } finally {
        await lock.release()
      }
    },
    async getManifest(reference) {
      const digest = isDigest(reference) ? reference : (await readIndex()).manifests.find((m) => m.annotations?.[REF_NAME_ANNOTATION] === reference)?.digest
      if (!digest) return null
      const bytes = await readSmall(blobPath(digest), `manifest ${digest}`)
      return bytes && { bytes, claimed: digest }
    },
    async listTags() {
      const tags = (await readIndex()).manifests.map((m) => m.annotations?.[REF_NAME_ANNOTATION])
      return tags.filter((t): t is string => typeof t === 'string').sort()
    },
  }
}

/** A layout's index, every entry checked (a sha256 digest, string annotations) before any names a file. */
function parseLayoutIndex(bytes: Buffer, path: string): LayoutIndex {
  let value: unknown
  try {
    value = parseStrictJson(bytes)
  } catch {
    throw new InvalidImageError(`${path} is not JSON`, { path })
  }
  return parseUntrusted(layoutIndexSchema, value, `the layout index ${path}`, { path })
}
