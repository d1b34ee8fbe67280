// Adversary 5 of THREAT-MODEL.md: whoever can write to the queue.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Queue, QueueEvents } from 'bullmq'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type WorkerEvent, QueueUnreachableError, Workspace, pushImage, snapshotWorkspace, startWorker } from '../../src/index.js'
import { type FanoutJobData, QUEUE_NAME } from '../../src/fanout/FanoutJob.js'
import { signJob } from '../../src/fanout/jobSignature.js'
import { CLI } from '../helpers/cli.js'
import { type RedisServer, startRedis } from '../helpers/redisServer.js'
import { type RegistryServer, startRegistry } from '../helpers/registryServer.js'
import { makeTestCa } from '../helpers/tlsRegistry.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/until.js'

describe('queue jobs are authenticated', () => {
  const KEY = randomBytes(32).toString('hex')
  let redis: RedisServer
  let registry: RegistryServer
  let remote: string
  /** A job that would run its command in the worker as it is, were the worker to take it: valid in every field, isolation off. */
  let job: (marker: string) => FanoutJobData

  beforeAll(async () => {
    redis = await startRedis()
    registry = await startRegistry({ dir: tempDir('queue-writers-registry') })
    remote = `oci://${registry.host}/queue-writers`
    const dir = tempDir('queue-writers-ws')
    writeFileSync(join(dir, 'notes.md'), 'v1\n')
    await using ws = await Workspace.open({ dir })
    const base = await snapshotWorkspace({ store: ws.store, dir })
    const pushed = await pushImage({ store: ws.store, id: base.id, remote: `${remote}:base` })
    job = (marker) => ({
      group: randomBytes(8).toString('hex'),
      index: 0,
      base: { id: base.id, remote: `${remote}@${pushed.manifest}` },
      registry: remote,
      candidate: { cmd: `touch ${marker}` },
      timeoutMs: null,
      isolate: false,
      httpPolicy: null,
      createdAt: new Date().toISOString(),
    })
  }, 120_000)

  afterAll(async () => {
    redis?.stop()
    await registry?.stop()
  })

  /** The jobs a Redis writer pushes straight into the queue, each with the reason a worker must give for refusing it. */
  function hostileJobs(marker: string): Array<{ what: string; id: string; data: object; reason: RegExp }> {
    const id = () => `hostile-${randomBytes(6).toString('hex')}`
    const key = Buffer.from(KEY)
    const signedElsewhere = `hostile-${randomBytes(6).toString('hex')}`
    const altered = signJob(key, 'altered', { ...job(marker), isolate: true })
    return [
      { what: 'unsigned', id: id(), data: job(marker), reason: /not signed/ },
      { what: 'signed with another key', id: 'other-key', data: signJob(randomBytes(32), 'other-key', job(marker)), reason: /signature does not match/ },
      { what: 'signed, asking to run unsandboxed', id: 'unsandboxed', data: signJob(key, 'unsandboxed', job(marker)), reason: /unsandboxed/ },
      {
        what: 'signed, a field out of its schema',
        id: 'bad-field',
        data: signJob(key, 'bad-field', { ...job(marker), isolate: true, candidate: { cmd: `touch ${marker}`, expose: ['/'] } as FanoutJobData['candidate'] }),
        reason: /candidate: Unrecognized key/,
      },
      { what: 'signed, then altered', id: 'altered', data: { ...altered, isolate: false }, reason: /signature does not match/ },
      { what: 'signed for another job id, queued again under a new one', id: signedElsewhere, data: signJob(key, 'the-original', job(marker)), reason: /signature does not match/ },
    ]
  }

  /** Push each job into the queue at `db`, as a Redis writer can, and return how each ended: the reason it failed, or 'ran'. */
  async function pushJobs(db: number, jobs: Array<{ id: string; data: object }>): Promise<string[]> {
    const connection = { host: '127.0.0.1', port: redis.port, db, maxRetriesPerRequest: null }
    const queue = new Queue(QUEUE_NAME, { connection })
    const events = new QueueEvents(QUEUE_NAME, { connection })
    try {
      await events.waitUntilReady()
      return await Promise.all(
        jobs.map(async ({ id, data }) =>
          (await queue.add('candidate', data, { jobId: id })).waitUntilFinished(events).then(
            () => 'ran',
            (err: Error) => err.message,
          ),
        ),
      )
    } finally {
      await queue.obliterate({ force: true })
      await events.close()
      await queue.close()
    }
  }

  /** `forkpoint worker` as a process (as `nobody` or as the caller), its stderr gathered. */
  function cliWorker({ queue, asNobody, env = {} }: { queue: string; asNobody: boolean; env?: Record<string, string> }): { child: ChildProcess; log: () => string } {
    const cache = tempDir('queue-writers-cache')
    if (asNobody) chownSync(cache, 65534, 65534)
    const argv = [CLI, 'worker', '--queue', queue, '--registry', remote, '--cache', join(cache, 'w')]
    const [cmd, ...args] = asNobody ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...argv] : argv
    const child = spawn(cmd!, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, FORKPOINT_QUEUE_KEY: KEY, ...env } })
    let log = ''
    child.stderr.on('data', (d: Buffer) => (log += d.toString()))
    return { child, log: () => log }
  }

  async function stop(child: ChildProcess): Promise<void> {
    child.kill('SIGTERM')
    if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve))
  }

  function markerDir(): string {
    const dir = tempDir('queue-writers-marker')
    chmodSync(dir, 0o777) // nobody could write the marker, were a job to run unsandboxed
    return dir
  }

  it('a worker (root, in this process) refuses every unsigned, wrongly signed, unsandboxed or invalid job: it fails naming why, and nothing of it runs', async () => {
    const marker = join(markerDir(), 'ran')
    const events: WorkerEvent[] = []
    const worker = await startWorker({ queue: redis.queue, key: KEY, registry: remote, dir: tempDir('queue-writers-cache'), onEvent: (e) => events.push(e) })
    try {
      const jobs = hostileJobs(marker)
      const ended = await pushJobs(0, jobs)
      jobs.forEach((j, i) => expect(ended[i], j.what).toMatch(j.reason))
      for (const reason of ended) expect(reason).toMatch(/refused: .*; nothing of it ran$/)
      expect(existsSync(marker)).toBe(false)
      expect(events.filter((e) => e.type === 'started')).toEqual([])
    } finally {
      await worker.close()
    }
  }, 120_000)

  it('a worker run by nobody refuses them too', async () => {
    const marker = join(markerDir(), 'ran')
    const { child, log } = cliWorker({ queue: `${redis.queue}/1`, asNobody: true })
    try {
      await until(() => log().includes('waiting for jobs') || child.exitCode !== null, 'the worker to start')
      expect(child.exitCode, log()).toBeNull()
      const jobs = hostileJobs(marker)
      const ended = await pushJobs(1, jobs)
      jobs.forEach((j, i) => expect(ended[i], j.what).toMatch(j.reason))
      expect(existsSync(marker)).toBe(false)
      expect(log()).not.toMatch(/\) started/) // a job's start: 'worker: job ID (#N) started'
    } finally {
      await stop(child)
    }
  }, 120_000)

  it("a worker's banner and messages name the queue without its password", async () => {
    const password = `pw${randomBytes(8).toString('hex')}`
    const locked = await startRedis({ users: [['default', 'on', `>${password}`, '~*', '&*', '+@all']] })
    const { child, log } = cliWorker({ queue: `redis://:${password}@127.0.0.1:${locked.port}`, asNobody: false })
    try {
      await until(() => log().includes('waiting for jobs') || child.exitCode !== null, 'the worker to start')
      expect(log()).toContain(`waiting for jobs on redis://127.0.0.1:${locked.port} `)
      expect(log()).not.toContain(password)
    } finally {
      await stop(child)
      locked.stop()
    }
    const refused = await startWorker({ queue: `redis://:${password}x@127.0.0.1:${locked.port}`, key: KEY, registry: remote, dir: tempDir('queue-writers-cache') }).catch(
      (e: unknown) => e,
    )
    expect(refused).toBeInstanceOf(QueueUnreachableError)
    expect(JSON.stringify(refused) + String(refused)).not.toContain(password)
  }, 120_000)

  it('a worker connects as a Redis ACL user, its password in the URL or given apart', async () => {
    const acl = await startRedis({
      users: [
        ['default', 'off'],
        ['alice', 'on', '>alice-secret', '~*', '&*', '+@all'],
      ],
    })
    try {
      const dir = tempDir('queue-writers-cache')
      const inUrl = await startWorker({ queue: `redis://alice:alice-secret@127.0.0.1:${acl.port}`, key: KEY, registry: remote, dir })
      await inUrl.close()
      const apart = await startWorker({ queue: `redis://alice@127.0.0.1:${acl.port}`, queuePassword: 'alice-secret', key: KEY, registry: remote, dir })
      expect(apart.queue).toBe(`redis://alice@127.0.0.1:${acl.port}`)
      await apart.close()
    } finally {
      acl.stop()
    }
  }, 120_000)

  it('a worker connects to a rediss:// (TLS) queue whose certificate its CA file vouches for, and to no other', async () => {
    const ca = makeTestCa(tempDir('queue-writers-ca'), '127.0.0.1')
    const tls = await startRedis({ tls: ca })
    try {
      const worker = await startWorker({ queue: tls.queue, queueCa: readFileSync(ca.caFile, 'utf8'), key: KEY, registry: remote, dir: tempDir('queue-writers-cache') })
      expect(worker.queue).toBe(tls.queue)
      await worker.close()
      await expect(startWorker({ queue: tls.queue, key: KEY, registry: remote, dir: tempDir('queue-writers-cache') })).rejects.toBeInstanceOf(QueueUnreachableError)
    } finally {
      tls.stop()
    }
  }, 120_000)
})
