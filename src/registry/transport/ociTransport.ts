import { promises as fs } from 'node:fs'
import { RegistryRequestError } from '../../errors/index.js'
import { type Digest, isDigest } from '../../objects/digest.js'
import { DigestCheck, type Expected } from '../../store/verifiedRead.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import type { BuiltManifest } from '../manifest/imageManifest.js'
import { byteRange } from './byteRange.js'
import { DEFAULT_LIMITS, type Limits, raiseHint } from '../pack/limits.js'
import { MANIFEST_ACCEPT } from '../manifest/mediaTypes.js'
import type { OciClient } from './ociClient.js'
import { readCapped } from './readCapped.js'
import type { BlobStream, TransferOptions, Transport } from './Transport.js'
import { parseStrictJson } from '../../util/strictJson.js'

/** Blobs above this go up in chunks of this size (PATCH), and an interrupted upload resumes. */
export const CHUNK_BYTES = 16 * 1024 * 1024

/** `oci://host/repo`: the OCI distribution API, spoken over one OciClient. */
export function ociTransport(client: OciClient, location: string, limits: Limits = DEFAULT_LIMITS): Transport {
  async function startUpload(signal?: AbortSignal): Promise<URL> {
    const response = await client.request('POST', client.url('blobs/uploads/'), { signal })
    await response.body?.cancel()
    const location = response.headers.get('location')
    if (response.status !== 202 || !location) throw await client.requestError(response, `starting an upload to ${client.repository}`)
    return new URL(location, client.base)
  }

  async function finishUpload(url: URL, digest: Digest, body: Buffer, signal?: AbortSignal): Promise<void> {
    url.searchParams.set('digest', digest)
    const response = await client.request('PUT', url, { body, headers: { 'content-type': 'application/octet-stream' }, signal })
    if (response.status !== 201) throw await client.requestError(response, `uploading blob ${digest}`)
    await response.body?.cancel()
  }

  /** Where an interrupted chunked upload stopped: the session URL and the next offset, if the registry still knows it. */
  async function resumePoint(statePath: string | undefined, digest: Digest): Promise<{ url: URL; offset: number } | null> {
    const text = statePath ? readStateTextOrNull(statePath) : null
    if (text === null) return null
    const state = JSON.parse(text) as { digest: string; location: string }
    if (state.digest !== digest) return null
    const url = new URL(state.location)
    const response = await client.request('GET', url)
    await response.body?.cancel()
    if (response.status !== 204) return null
    const range = /^(?:bytes=)?0-(\d+)$/.exec(response.headers.get('range') ?? '')
    return { url: new URL(response.headers.get('location') ?? state.location, client.base), offset: range ? Number(range[1]) + 1 : 0 }
  }

  async function putChunked(blob: { digest: Digest; size: number }, source: string, { signal, onBytes, resumeState }: TransferOptions & { resumeState?: string }): Promise<void> {
    const resumed = await resumePoint(resumeState, blob.digest)
    let url = resumed?.url ?? (await startUpload(signal))
    let offset = resumed?.offset ?? 0
    if (offset > 0) onBytes?.(offset)
    const check = new DigestCheck(blob, `(${source})`)
    const handle = await fs.open(source, 'r')
    try {
      await hashPrefix(handle, offset, check) // a resumed upload's bytes already sent are verified too
      while (offset < blob.size) {
        const length = Math.min(CHUNK_BYTES, blob.size - offset)
        const chunk = Buffer.alloc(length)
        await handle.read(chunk, 0, length, offset)
        check.update(chunk)
        if (offset + length === blob.size) check.check() // before the last chunk: the registry never completes a bad object
        const response = await client.request('PATCH', url, {
          body: chunk,
          headers: { 'content-type': 'application/octet-stream', 'content-range': `${offset}-${offset + length - 1}` },
          signal,
        })
        await response.body?.cancel()
        if (response.status !== 202) throw await client.requestError(response, `uploading a chunk of ${blob.digest}`)
        url = new URL(response.headers.get('location') ?? url.href, client.base)
        offset += length
        onBytes?.(length)
        if (resumeState) await atomicWrite(resumeState, JSON.stringify({ digest: blob.digest, location: url.href }))
      }
    } finally {
      await handle.close()
    }
    await finishUpload(url, blob.digest, Buffer.alloc(0), signal)
    if (resumeState) await fs.rm(resumeState, { force: true })
  }

  return {
    location,
    async statBlob(digest) {
      const response = await client.request('HEAD', client.url(`blobs/${digest}`))
      if (response.status === 404) return null
      if (!response.ok) throw await client.requestError(response, `checking blob ${digest}`)
      return Number(response.headers.get('content-length') ?? 0)
    },
    async putBlob(blob, source, options = {}) {
      if (blob.size > CHUNK_BYTES) return putChunked(blob, source, options)
      // the upload's session asked for while the file is read and checked: a small push is mostly round trips
      const [body, url] = await Promise.all([fs.readFile(source).then((bytes) => verifyBytes(bytes, blob, source)), startUpload(options.signal)])
      await finishUpload(url, blob.digest, body, options.signal)
      options.onBytes?.(body.length)
    },
    async openBlob(digest, offset, { signal, length }: TransferOptions & { length?: number } = {}): Promise<BlobStream | null> {
      const headers: Record<string, string> = offset > 0 || length !== undefined ? { range: byteRange(offset, length) } : {}
      const response = await client.request('GET', client.url(`blobs/${digest}`), { headers, signal })
      if (response.status === 404) {
        await response.body?.cancel()
        return null
      }
      if (response.status !== 200 && response.status !== 206) throw await client.requestError(response, `fetching blob ${digest}`)
      if (!response.body) throw new RegistryRequestError(`fetching blob ${digest}: empty response`)
      const start = response.status === 206 ? Number(/bytes (\d+)-/.exec(response.headers.get('content-range') ?? '')?.[1] ?? 0) : 0
      return { offset: start, body: response.body }
    },
    async putManifest({ descriptor, bytes }: BuiltManifest, tag?: string) {
      const response = await client.request('PUT', client.url(`manifests/${tag ?? descriptor.digest}`), {
        body: bytes,
        headers: { 'content-type': descriptor.mediaType },
      })
      if (response.status !== 201) throw await client.requestError(response, `pushing manifest ${descriptor.digest}`)
      await response.body?.cancel()
    },
    async getManifest(reference) {
      const response = await client.request('GET', client.url(`manifests/${reference}`), { headers: { accept: MANIFEST_ACCEPT } })
      if (response.status === 404) {
        await response.body?.cancel()
        return null
      }
      if (!response.ok) throw await client.requestError(response, `fetching manifest ${reference}`)
      const claimed = response.headers.get('docker-content-digest')
      const bytes = await readCapped(response.body, limits.maxManifestBytes, `manifest ${reference} from ${location}`, raiseHint('maxManifestBytes'))
      return isDigest(claimed) ? { bytes, claimed } : { bytes }
    },
    async listTags() {
      const tags: string[] = []
      let url: URL | null = client.url('tags/list?n=1000')
      while (url) {
        const response: Response = await client.request('GET', url)
        if (response.status === 404) {
          await response.body?.cancel()
          return []
        }
        if (!response.ok) throw await client.requestError(response, 'listing tags')
        tags.push(...parseTagList(await readCapped(response.body, limits.maxManifestBytes, `the tag list of ${location}`, raiseHint('maxManifestBytes'))))
        const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1]
        url = next ? new URL(next, client.base) : null
      }
      return tags.sort()
    },
  }
}

/** `bytes`, once checked against the blob's digest and size. */
function verifyBytes(bytes: Buffer, blob: Expected, source: string): Buffer {
  const check = new DigestCheck(blob, `(${source})`)
  check.update(bytes)
  check.check()
  return bytes
}

async function hashPrefix(handle: fs.FileHandle, length: number, check: DigestCheck): Promise<void> {
  for (let at = 0; at < length; at += CHUNK_BYTES) {
    const chunk = Buffer.alloc(Math.min(CHUNK_BYTES, length - at))
    await handle.read(chunk, 0, chunk.length, at)
    check.update(chunk)
  }
}

function parseTagList(bytes: Buffer): string[] {
  try {
    const tags = (parseStrictJson(bytes) as { tags?: unknown } | null)?.tags ?? [] // an empty repository lists null
    if (Array.isArray(tags)) return tags.filter((t): t is string => typeof t === 'string')
  } catch {
    // refused below
  }
  throw new RegistryRequestError('the registry sent a tag list that is not JSON')
}
