import type { S3Client } from '@aws-sdk/client-s3'
import { freePort } from './registryServer.js'

export interface S3Server {
  endpoint: string
  client: S3Client
  stop(): Promise<void>
}

/** The bucket of the run's shared S3 server (test/helpers/startSharedServices.ts). */
export const SHARED_BUCKET = 'images'

/** A real S3-compatible server (s3rver) on 127.0.0.1 with one bucket. */
export async function startS3({ bucket, dir }: { bucket: string; dir: string }): Promise<S3Server> {
  // loaded here, not on import: a file that takes the shared server (sharedServices.ts) does not pay for them
  const [{ S3Client, CreateBucketCommand }, { default: S3rver }] = await Promise.all([
    import('@aws-sdk/client-s3'),
    // @ts-expect-error s3rver ships no types
    import('s3rver') as Promise<{ default: new (options: object) => { run(): Promise<void>; close(): Promise<void> } }>,
  ])
  const port = await freePort()
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory: dir })
  await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  useS3rverCredentials()
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  })
  await client.send(new CreateBucketCommand({ Bucket: bucket }))
  return { endpoint, client, stop: () => server.close() }
}

/** The credentials s3rver takes, in the environment, where the S3 transport reads them. */
export function useS3rverCredentials(): void {
  process.env['AWS_ACCESS_KEY_ID'] = 'S3RVER'
  process.env['AWS_SECRET_ACCESS_KEY'] = 'S3RVER'
}
