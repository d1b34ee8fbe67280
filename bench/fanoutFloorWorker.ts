/**
 * The fan-out benchmark's floor: a BullMQ worker, without forkpoint, whose job does only
 * what any fan-out on these two engines must do for a candidate besides running it: the
 * job taken and completed through the queue, and a result image put in the registry by
 * plain requests, in the order the registry needs them (a blob: POST then PUT; the image
 * manifest naming it; a tagged index naming that), each job's blob its own. A job first
 * waits `sleepMs` (its data), as long as the candidate it stands beside ran, so that
 * anything the machine does differently after a second of idleness shows in both.
 * `node --import tsx bench/fanoutFloorWorker.ts QUEUE_NAME REDIS_PORT REGISTRY_HOST REPO`;
 * says "waiting for jobs" on stderr once it does, as `forkpoint worker` does; SIGTERM closes it.
 */
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Worker } from 'bullmq'

const [queueName, redisPort, registryHost, repo] = process.argv.slice(2) as [string, string, string, string]
const base = `http://${registryHost}/v2/${repo}`
const digestOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`

async function request(method: string, url: string, body?: Buffer, contentType?: string): Promise<Response> {
  const response = await fetch(url, { method, ...(body ? { body, headers: { 'content-type': contentType ?? 'application/octet-stream' } } : {}) })
  await response.arrayBuffer()
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status}`)
  return response
}

async function putBlob(bytes: Buffer): Promise<{ mediaType: string; digest: string; size: number }> {
  const digest = digestOf(bytes)
  const upload = new URL((await request('POST', `${base}/blobs/uploads/`)).headers.get('location')!, base)
  upload.searchParams.set('digest', digest)
  await request('PUT', upload.href, bytes)
  return { mediaType: 'application/vnd.oci.image.layer.v1.tar+zstd', digest, size: bytes.length }
}

/** Put a manifest under `tag`, or by its digest when there is none. */
async function putManifest(mediaType: string, document: object, tag?: string): Promise<{ mediaType: string; digest: string; size: number }> {
  const bytes = Buffer.from(JSON.stringify(document))
  const digest = digestOf(bytes)
  await request('PUT', `${base}/manifests/${tag ?? digest}`, bytes, mediaType)
  return { mediaType, digest, size: bytes.length }
}

const configBytes = Buffer.from('{"architecture":"amd64","os":"linux","rootfs":{"diff_ids":[],"type":"layers"}}')
const config = { ...(await putBlob(configBytes)), mediaType: 'application/vnd.oci.image.config.v1+json' }

const worker = new Worker(
  queueName,
  async (job) => {
    await sleep((job.data as { sleepMs: number }).sleepMs)
    const layer = await putBlob(Buffer.from(`the result of job ${job.id}\n`))
    const manifest = await putManifest('application/vnd.oci.image.manifest.v1+json', {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config,
      layers: [layer],
    })
    await putManifest('application/vnd.oci.image.index.v1+json', { schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [manifest] }, `job-${job.id}`)
    return manifest.digest
  },
  { connection: { host: '127.0.0.1', port: Number(redisPort) }, concurrency: 1 },
)
await worker.waitUntilReady()
process.stderr.write('waiting for jobs\n')
process.on('SIGTERM', () => void worker.close().then(() => process.exit(0)))
