/**
 * vitest globalSetup of the integration project (vitest.config.ts): one registry and one S3 server serve
 * every test file of the run, so the files do not each pay for starting their own. A file takes them with
 * test/helpers/sharedServices.ts and writes only under names of its own, so files running side by side
 * never meet. Tests that damage stored data or need auth or TLS start servers of their own.
 */
import { rmSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { startRegistry } from './registryServer.js'
import { SHARED_BUCKET, startS3 } from './s3Server.js'

declare module 'vitest' {
  export interface ProvidedContext {
    sharedRegistry: { host: string; dataDir: string }
    sharedS3: { endpoint: string; bucket: string }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'shared-services-'))
  const [registry, s3] = await Promise.all([startRegistry({ dir: join(dir, 'registry') }), startS3({ bucket: SHARED_BUCKET, dir: join(dir, 's3rver') })])
  project.provide('sharedRegistry', { host: registry.host, dataDir: registry.dataDir })
  project.provide('sharedS3', { endpoint: s3.endpoint, bucket: SHARED_BUCKET })
  return async () => {
    await Promise.all([registry.stop(), s3.stop()])
    rmSync(dir, { recursive: true, force: true })
  }
}
