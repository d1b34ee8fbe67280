import type { S3Client } from '@aws-sdk/client-s3'
import { loadOptional } from '../../util/optionalPackage.js'
import { fileTransport } from './fileTransport.js'
import { type Limits, resolveLimits } from '../pack/limits.js'
import { type Credentials, findCredentials } from './findCredentials.js'
import { OciClient } from './ociClient.js'
import { ociTransport } from './ociTransport.js'
import { type Remote, remoteLocation } from './parseRemote.js'
import type { Transport } from './Transport.js'

/** How to reach a remote; everything optional. */
export interface ConnectOptions {
  /** Plain HTTP to a registry that is not on a loopback address. */
  insecure?: boolean
  /** Registry credentials; default: environment and Docker's config (see findCredentials). Null forces anonymous. */
  credentials?: Credentials | null
  /** Injected for tests and recording. */
  fetch?: typeof fetch
  /** An S3 client of your own (credentials, retries, endpoint). */
  s3Client?: S3Client
  /** Caps on sizes read from the remote (default: environment, then DEFAULT_LIMITS). */
  limits?: Partial<Limits>
}

/** The transport for a parsed remote. */
export async function openTransport(remote: Remote, options: ConnectOptions = {}): Promise<Transport> {
  const limits = resolveLimits(options.limits)
  switch (remote.transport) {
    case 'file':
      return fileTransport(remote.root, limits)
    case 'oci': {
      const credentials = options.credentials !== undefined ? options.credentials : (remote.credentials ?? (await findCredentials(remote.host)))
      const client = new OciClient({
        host: remote.host,
        repository: remote.repository,
        insecure: options.insecure ?? false,
        credentials,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      })
      return ociTransport(client, remoteLocation(remote), limits)
    }
    case 's3': {
      // the AWS SDK is large: loaded only when an s3:// remote is really used
      const { s3Transport } = await loadOptional('s3', () => import('./s3Transport.js'))
      return s3Transport({ bucket: remote.bucket, prefix: remote.prefix, options: remote.options, limits, ...(options.s3Client ? { client: options.s3Client } : {}) })
    }
  }
}
