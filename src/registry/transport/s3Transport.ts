import type { Readable } from 'node:stream'
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import { ForkpointError, RegistryAuthError, RegistryRequestError } from '../../errors/index.js'
import { type Digest, digestHex, isDigest } from '../../objects/digest.js'
import { createVerifiedReadStream } from '../../store/verifiedRead.js'
import type { BuiltManifest } from '../manifest/imageManifest.js'
import { DEFAULT_LIMITS, type Limits, raiseHint } from '../pack/limits.js'
import type { S3Options } from './parseRemote.js'
import { byteRange } from './byteRange.js'
import { readCapped } from './readCapped.js'
import { echoBody } from './redactSecrets.js'
import type { BlobStream, TransferOptions, Transport } from './Transport.js'

/**
 * `s3://bucket/prefix`: the OCI layout's blob names under a prefix (`blobs/sha256/…`;
 * manifests are blobs too) and one small object per tag (`tags/NAME`, holding the
 * manifest digest), so concurrent pushes of different tags never overwrite each other.
 * Credentials come from the AWS SDK's usual chain; `endpoint` serves S3-compatible stores.
 * Like the SDK it stands on, it reads its settings from the environment where the remote
 * names none: the region (`AWS_REGION`, `AWS_DEFAULT_REGION`) and the endpoint
 * (`FORKPOINT_S3_ENDPOINT`).
 */
export function s3Transport({
  bucket,
  prefix,
  options,
  limits = DEFAULT_LIMITS,
  client,
}: {
  bucket: string
  prefix: string
  options: S3Options
  limits?: Limits
  client?: S3Client
}): Transport {
  const s3 = client ?? new S3Client(s3Config(options))
  const key = (...parts: string[]) => [prefix, ...parts].filter((p) => p !== '').join('/')
  const blobKey = (digest: Digest) => key('blobs', 'sha256', digestHex(digest))
  const tagsPrefix = `${key('tags')}/`

  async function call<T>(what: string, fn: () => Promise<T>): Promise<T | null> {
    try {
      return await fn()
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number }; message?: string }
      const status = e.$metadata?.httpStatusCode
      if (status === 404 || e.name === 'NoSuchKey' || e.name === 'NotFound') return null
      if (e.name === 'AbortError' || err instanceof ForkpointError) throw err
      if (status === 401 || status === 403) throw new RegistryAuthError(`S3 refused ${what} in ${bucket}: ${e.name ?? status}`, { bucket, status })
      throw new RegistryRequestError(`S3 ${what} in ${bucket} failed: ${echoBody(e.message ?? e.name ?? String(err), awsSecrets())}`, { bucket, status })
    }
  }

  const putBytes = (k: string, body: Buffer, what: string) => call(what, () => s3.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: body, ContentLength: body.length })))
  const getBytes = async (k: string, what: string) => {
    const out = await call(what, () => s3.send(new GetObjectCommand({ Bucket: bucket, Key: k })))
    return out ? readCapped(out.Body as Readable, limits.maxManifestBytes, what, raiseHint('maxManifestBytes')) : null
  }

  const statBlob = async (digest: Digest) => {
    const head = await call(`checking ${digest}`, () => s3.send(new HeadObjectCommand({ Bucket: bucket, Key: blobKey(digest) })))
    return head ? (head.ContentLength ?? 0) : null
  }

  return {
    location: `s3://${bucket}/${prefix}`,
    statBlob,
    async putBlob(blob, source, { signal, onBytes }: TransferOptions = {}) {
      const body = createVerifiedReadStream(source, blob, { onBytes })
      // the SDK reports a failed body as a failed request: the body's own refusal is the news
      let refused = null as Error | null
      const stop = new AbortController()
      body.on('error', (err) => {
        refused = err
        stop.abort()
      })
      const abortSignal = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal
      const upload = call(`uploading ${blob.digest}`, () =>
        s3.send(new PutObjectCommand({ Bucket: bucket, Key: blobKey(blob.digest), Body: body, ContentLength: blob.size }), { abortSignal }),
      )
      await upload.catch((err: unknown) => {
        throw refused ?? err
      })
      if (refused) throw refused
    },
    async openBlob(digest, offset, { signal, length }: TransferOptions & { length?: number } = {}): Promise<BlobStream | null> {
      const range = offset > 0 || length !== undefined ? byteRange(offset, length) : undefined
      const out = await call(`fetching ${digest}`, () => s3.send(new GetObjectCommand({ Bucket: bucket, Key: blobKey(digest), Range: range }), { abortSignal: signal }))
      if (!out?.Body) return null
      const start = out.ContentRange ? Number(/bytes (\d+)-/.exec(out.ContentRange)?.[1] ?? 0) : 0
      return { offset: start, body: out.Body as Readable }
    },
    async putManifest({ descriptor, bytes }: BuiltManifest, tag?: string) {
      await putBytes(blobKey(descriptor.digest), bytes, `writing manifest ${descriptor.digest}`)
      if (tag !== undefined) await putBytes(key('tags', tag), Buffer.from(descriptor.digest), `writing tag ${tag}`)
    },
    async getManifest(reference) {
      let digest: string | undefined = reference
      if (!isDigest(reference)) digest = (await getBytes(key('tags', reference), `reading tag ${reference}`))?.toString('utf8').trim()
      if (!isDigest(digest)) return null
      const bytes = await getBytes(blobKey(digest), `reading manifest ${digest}`)
      return bytes && { bytes, claimed: digest }
    },
    async listTags() {
      const tags: string[] = []
      let token: string | undefined
      do {
        const page = await call('listing tags', () => s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: tagsPrefix, ContinuationToken: token })))
        for (const object of page?.Contents ?? []) if (object.Key) tags.push(object.Key.slice(tagsPrefix.length))
        token = page?.IsTruncated ? page.NextContinuationToken : undefined
      } while (token)
      return tags.sort()
    },
  }
}

function s3Config(options: S3Options): S3ClientConfig {
  const config: S3ClientConfig = {
    region: options.region ?? process.env['AWS_REGION'] ?? process.env['AWS_DEFAULT_REGION'] ?? 'us-east-1',
    // every object is verified by its sha256 digest on arrival; SDK checksums would only
    // stop S3-compatible stores that do not know them
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  }
  const endpoint = options.endpoint ?? process.env['FORKPOINT_S3_ENDPOINT']
  if (endpoint) {
    config.endpoint = endpoint
    config.forcePathStyle = true
  }
  return config
}

/** The AWS secrets of this process, which no S3 error message may repeat. */
function awsSecrets(): string[] {
  return ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'].map((name) => process.env[name] ?? '').filter((v) => v !== '')
}
