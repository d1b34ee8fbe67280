import { type Stats, createWriteStream, promises as fs } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { InvalidImageError, UnsafePathError } from '../../errors/index.js'
import { errnoCode } from '../../util/fsx.js'
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
  const indexPath = join(root, 'index.json')

  /** A blob's file; null when the layout has no blob directory (nor, then, the blob). */
  async function blobPath(digest: Digest): Promise<string | null> {
    const dir = await blobDirectory(root)
    return dir && join(dir, digestHex(digest))
  }

  async function ensureLayout(): Promise<void> {
    await fs.mkdir(root, { recursive: true })
    const marker = join(root, 'oci-layout')
    const stat = await lstatOrNull(marker)
    if (stat === null) await atomicWrite(marker, '{"imageLayoutVersion":"1.0.0"}')
    else if (!stat.isFile()) throw new UnsafePathError(`${marker} is not a regular file: refusing the layout`, { path: marker })
  }

  const readSmall = (path: string, what: string) => readRegularFile(path, limits.maxManifestBytes, what, raiseHint('maxManifestBytes'))

  async function readIndex(): Promise<LayoutIndex> {
    const bytes = await readSmall(indexPath, 'the layout index')
    return bytes === null ? { schemaVersion: 2, mediaType: MediaType.index, manifests: [] } : parseLayoutIndex(bytes, indexPath)
  }

  async function writeBlobFrom(digest: Digest, write: (tmp: string) => Promise<void>): Promise<void> {
    await ensureLayout()
    const target = join(await blobDirectory(root, true), digestHex(digest))
    const tmp = tempSibling(target)
    try {
      await write(tmp)
      await fs.rename(tmp, target)
    } finally {
      await fs.rm(tmp, { force: true })
    }
  }

  async function openBlobFile(digest: Digest): Promise<FileHandle | null> {
    const path = await blobPath(digest)
    return path === null ? null : openRegularFile(path)
  }

  async function statBlob(digest: Digest): Promise<number | null> {
    const handle = await openBlobFile(digest)
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
      await writeBlobFrom(blob.digest, (tmp) => pipeline(createVerifiedReadStream(source, blob, { onBytes }), createWriteStream(tmp, { flags: 'wx' }), { signal }))
    },
    async openBlob(digest, offset, { length }: { length?: number } = {}): Promise<BlobStream | null> {
      const handle = await openBlobFile(digest)
      if (handle === null) return null
      const start = Math.min(offset, (await handle.stat()).size)
      return { offset: start, body: handle.createReadStream(length === undefined ? { start } : { start, end: start + length - 1 }) }
    },
    async putManifest({ descriptor, bytes }: BuiltManifest, tag?: string) {
      await writeBlobFrom(descriptor.digest, (tmp) => fs.writeFile(tmp, bytes, { flag: 'wx' }))
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
      const path = digest && (await blobPath(digest))
      if (!path) return null
      const bytes = await readSmall(path, `manifest ${digest}`)
      return bytes && { bytes, claimed: digest }
    },
    async listTags() {
      const tags = (await readIndex()).manifests.map((m) => m.annotations?.[REF_NAME_ANNOTATION])
      return tags.filter((t): t is string => typeof t === 'string').sort()
    },
  }
}

/**
 * `root/blobs/sha256`, made when `create`, each part checked with lstat to be a real
 * directory: a symlink there (`blobs/sha256 -> /elsewhere`, planted in a workspace or
 * carried by a cloned repository) would take blob writes and reads out of the layout.
 * Null when a part is missing and not to be made.
 */
async function blobDirectory(root: string, create: true): Promise<string>
async function blobDirectory(root: string): Promise<string | null>
async function blobDirectory(root: string, create = false): Promise<string | null> {
  let dir = root
  for (const part of ['blobs', 'sha256']) {
    dir = join(dir, part)
    if (create) await mkdirUnlessThere(dir)
    const stat = await lstatOrNull(dir)
    if (stat === null) return null
    if (!stat.isDirectory())
      throw new UnsafePathError(`${dir} is ${stat.isSymbolicLink() ? 'a symlink' : 'not a directory'}: refusing to follow it out of the layout`, { path: dir })
  }
  return dir
}

async function mkdirUnlessThere(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir)
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err
  }
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await fs.lstat(path)
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null
    throw err
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
