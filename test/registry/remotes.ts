import { afterAll, beforeAll } from 'vitest'
import { startRegistry, type RegistryServer } from '../helpers/registryServer.js'
import { startS3, type S3Server } from '../helpers/s3Server.js'
import { tempDir } from '../helpers/tmp.js'

export type TransportName = 'file' | 'oci' | 's3'
export const TRANSPORTS: TransportName[] = ['file', 'oci', 's3']

/**
 * Start a real OCI registry and a real S3 server for the test file, and hand out fresh
 * remote specs (a new repository / prefix / directory each time) for any transport.
 */
export function useRemotes(): { remote(kind: TransportName, tag?: string): string; registry(): RegistryServer } {
  let registry: RegistryServer
  let s3: S3Server
  let n = 0
  beforeAll(async () => {
    ;[registry, s3] = await Promise.all([startRegistry({ dir: tempDir('registry') }), startS3({ bucket: 'images', dir: tempDir('s3rver') })])
  })
  afterAll(async () => {
    await Promise.all([registry?.stop(), s3?.stop()])
  })
  return {
    remote(kind, tag = 'v1') {
      n++
      switch (kind) {
        case 'file':
          return `file://${tempDir('layout')}:${tag}`
        case 'oci':
          return `oci://${registry.host}/team/agent${n}:${tag}`
        case 's3':
          return `s3://images/agents/a${n}:${tag}?endpoint=${encodeURIComponent(s3.endpoint)}`
      }
    },
    registry: () => registry,
  }
}
