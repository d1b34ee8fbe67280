import type { Digest } from '../../objects/digest.js'
import type { BuiltManifest } from '../manifest/imageManifest.js'

/** Options every transfer takes: cancellation and a byte counter for progress. */
export interface TransferOptions {
  signal?: AbortSignal | undefined
  onBytes?: ((n: number) => void) | undefined
}

/** A blob's bytes from `offset` on. `offset` is where the stream really starts: 0 when the remote ignored the range. */
export interface BlobStream {
  offset: number
  body: AsyncIterable<Uint8Array>
}

export interface FetchedManifest {
  bytes: Buffer
  claimed?: Digest
}

/**
 * One remote, whatever it is made of: an OCI layout directory, a distribution API
 * registry or an S3 prefix. Every operation is by digest except tags; none verifies
 * content (pull and push do, in one place for all transports).
 */
export interface Transport {
  /** The remote, for messages: `file:///…`, `oci://host/repo`, `s3://bucket/prefix`. */
  readonly location: string
  /** The blob's size when the remote has it, else null. */
  statBlob(digest: Digest): Promise<number | null>
  /** Send a blob from a local file. `resumeState` is a file where an interrupted upload may keep its place. */
  putBlob(blob: { digest: Digest; size: number }, source: string, options?: TransferOptions & { resumeState?: string }): Promise<void>
  /** Read a blob from `offset` (`length` bytes, or to its end); null when the remote does not have it. */
  openBlob(digest: Digest, offset: number, options?: TransferOptions & { length?: number }): Promise<BlobStream | null>
  /** Store a manifest (its bytes are its identity) and, when `tag` is given, point the tag at it. */
  putManifest(manifest: BuiltManifest, tag?: string): Promise<void>
  /** A manifest's exact bytes by tag or digest, and the digest the remote claims for them; null when there is none. */
  getManifest(reference: string): Promise<FetchedManifest | null>
  listTags(): Promise<string[]>
}
