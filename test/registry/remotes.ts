import { afterAll, beforeAll } from 'vitest'
import { startRegistry, type RegistryServer } from '../helpers/registryServer.js'
import { fileToken, sharedRegistry, sharedS3, type SharedRegistry } from '../helpers/sharedServices.js'
import { tempDir } from '../helpers/tmp.js'

export type TransportName = 'file' | 'oci' | 's3'
export const TRANSPORTS: TransportName[] = ['file', 'oci', 's3']

/**
 * Hand out fresh remote specs (a new repository / prefix / directory each time, under names of this
 * file's own) for any transport, on the run's shared registry and S3 server. With `damagesBlobs`,
 * the file's tests corrupt stored blobs, so the file gets a registry of its own: the shared one may hold
 * the same blobs for another file.
 */
export function useRemotes({ damagesBlobs = false }: { damagesBlobs?: boolean } = {}): {
  remote(kind: TransportName, tag?: string): string
  registry(): SharedRegistry
} {
  let registry: SharedRegistry
  let own: RegistryServer | undefined
  let n = 0
  const name = fileToken()
  beforeAll(async () => {
    registry = damagesBlobs ? (own = await startRegistry({ dir: tempDir('registry') })) : sharedRegistry()
  })
  afterAll(async () => {
    await own?.stop()
  })
  return {
    remote(kind, tag = 'v1') {
      n++
      switch (kind) {
        case 'file':
          return `file://${tempDir('layout')}:${tag}`
        case 'oci':
          return `oci://${registry.host}/team/${name}-agent${n}:${tag}`
        case 's3': {
          const s3 = sharedS3()
          return `s3://${s3.bucket}/agents/${name}-a${n}:${tag}?endpoint=${encodeURIComponent(s3.endpoint)}`
        }
      }
    },
    registry: () => registry,
  }
}
