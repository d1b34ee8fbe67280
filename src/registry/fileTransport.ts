import { createReadStream, createWriteStream, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { acquireLock } from '../store/lockFile.js'
import { createVerifiedReadStream } from '../store/verifiedRead.js'
import { type Digest, digestHex, isDigest } from '../store/digest.js'
import { atomicWrite, tempSibling } from '../util/atomicWrite.js'
import { readTextOrNull } from '../util/fsx.js'
import type { Descriptor } from './Descriptor.js'
import type { BuiltManifest } from './imageManifest.js'
import { MediaType, REF_NAME_ANNOTATION } from './mediaTypes.js'
import type { BlobStream, TransferOptions, Transport } from './Transport.js'

interface LayoutIndex {
  schemaVersion: 2
  mediaType: string
  manifests: Descriptor[]
}

/**
 * `file:///path`: an OCI image layout directory (`oci-layout`, `index.json`,
 * `blobs/sha256/…`), readable by standard OCI tools. Tags are index.json entries with an
 * `org.opencontainers.image.ref.name` annotation; index.json changes under a lock file.
 */
export function fileTransport(root: string): Transport {
  const blobPath = (digest: Digest) => join(root, 'blobs', 'sha256', digestHex(digest))
  const indexPath = join(root, 'index.json')

  async function ensureLayout(): Promise<void> {
    await fs.mkdir(join(root, 'blobs', 'sha256'), { recursive: true })
    if ((await readTextOrNull(join(root, 'oci-layout'))) === null) {
      await atomicWrite(join(root, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}')
    }
  }

  async function readIndex(): Promise<LayoutIndex> {
    const text = await readTextOrNull(indexPath)
    return text === null ? { schemaVersion: 2, mediaType: MediaType.index, manifests: [] } : (JSON.parse(text) as LayoutIndex)
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

  const statBlob = async (digest: Digest) => (await fs.stat(blobPath(digest)).catch(() => null))?.size ?? null

  return {
    location: `file://${root}`,
    statBlob,
    async putBlob(blob, source, { signal, onBytes }: TransferOptions = {}) {
      await writeBlobFrom(blob.digest, (tmp) => pipeline(createVerifiedReadStream(source, blob, { onBytes }), createWriteStream(tmp), { signal }))
    },
    async openBlob(digest, offset): Promise<BlobStream | null> {
      const size = await statBlob(digest)
      if (size === null) return null
      const start = Math.min(offset, size)
      return { offset: start, body: createReadStream(blobPath(digest), { start }) }
    },
    hasManifest: async (digest) => (await statBlob(digest)) !== null,
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
      const digest = isDigest(reference)
        ? reference
        : (await readIndex()).manifests.find((m) => m.annotations?.[REF_NAME_ANNOTATION] === reference)?.digest
      if (!digest) return null
      const bytes = await fs.readFile(blobPath(digest)).catch(() => null)
      return bytes && { bytes, claimed: digest }
    },
    async listTags() {
      const tags = (await readIndex()).manifests.map((m) => m.annotations?.[REF_NAME_ANNOTATION])
      return tags.filter((t): t is string => typeof t === 'string').sort()
    },
  }
}
