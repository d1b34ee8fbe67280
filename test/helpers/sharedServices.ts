import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { blobPath, type RegistryServer } from './registryServer.js'
import { useS3rverCredentials } from './s3Server.js'

/** The run's registry (test/helpers/startSharedServices.ts); it outlives the file, so there is nothing to stop. */
export type SharedRegistry = Omit<RegistryServer, 'stop'>

/** The registry every test file of the run shares: push only to repositories named with fileToken(). */
export function sharedRegistry(): SharedRegistry {
  const { host, dataDir } = inject('sharedRegistry')
  return { host, dataDir, blobDataPath: (digest) => blobPath(dataDir, digest) }
}

/** The S3 server every test file of the run shares, and its bucket: write only under keys starting with fileToken(). */
export function sharedS3(): { endpoint: string; bucket: string } {
  useS3rverCredentials()
  return inject('sharedS3')
}

const token = randomBytes(4).toString('hex')

/** A name part no other test file of the run uses: for repositories and key prefixes on the shared servers. */
export function fileToken(): string {
  return token
}
