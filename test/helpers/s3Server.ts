import { S3Client, CreateBucketCommand } from '@aws-sdk/client-s3'
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver'
import { freePort } from './registryServer.js'

export interface S3Server {
  endpoint: string
  client: S3Client
  stop(): Promise<void>
}

/** A real S3-compatible server (s3rver) on 127.0.0.1 with one bucket. */
export async function startS3({ bucket, dir }: { bucket: string; dir: string }): Promise<S3Server> {
  const port = await freePort()
  const server = new S3rver({ port, address: '127.0.0.1', silent: true, directory: dir })
  await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  process.env['AWS_ACCESS_KEY_ID'] = 'S3RVER'
  process.env['AWS_SECRET_ACCESS_KEY'] = 'S3RVER'
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
