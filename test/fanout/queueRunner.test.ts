import { spawn } from 'node:child_process'
import { chownSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Queue, QueueEvents } from 'bullmq'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FunctionCandidateError, QueueUnreachableError, Workspace, bestOfN, queueRunner, snapshotWorkspace, speculate, startWorker, tournament } from '../../src/index.js'
import type { FanoutJobData, FanoutJobResult } from '../../src/fanout/FanoutJob.js'
import { QUEUE_NAME } from '../../src/fanout/FanoutJob.js'
import { type SignedJobData, signJob } from '../../src/fanout/jobSignature.js'
import { pushImage } from '../../src/index.js'
import { openTransport } from '../../src/registry/transport/openTransport.js'
import { parseRemote } from '../../src/registry/transport/parseRemote.js'
import { freePort } from '../helpers/registryServer.js'
import { sharedRegistry, type SharedRegistry } from '../helpers/sharedServices.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/until.js'
import { useCountingServer } from '../helpers/countingServer.js'
import { type RedisServer, startRedis } from '../helpers/redisServer.js'

const mail = useCountingServer()
let redis: RedisServer
let registry: SharedRegistry
let queue: string
/** The key the tests' submitters and workers share. */
const key = 'fanout-test-key-0123456789abcdef'

beforeAll(async () => {
  redis = await startRedis()
  queue = redis.queue
  registry = sharedRegistry()
}, 60_000)

afterAll(async () => {
  redis?.stop()
})

async function workspace(): Promise<Workspace> {
  const dir = tempDir('fanout-ws')
  writeFileSync(join(dir, 'notes.md'), 'v1\n')
  return Workspace.open({ dir })
}

describe('queueRunner (loopback)', () => {
  it('refuses a function candidate with a typed error, before anything is queued', async () => {
    await using ws = await workspace()
    const runner = queueRunner({ queue, key, registry: `oci://${registry.host}/fanout` })
    const err = await speculate(['true', async () => true], { runner })
      .apply(ws)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(FunctionCandidateError)
    expect((err as FunctionCandidateError).data.index).toBe(1)
    expect((err as FunctionCandidateError).exitCode).toBe(2)
  })

  it('an unreachable queue is a clear error (exit 2), not a hang', async () => {
    await using ws = await workspace()
    const runner = queueRunner({ queue: `redis://127.0.0.1:${await freePort()}`, key, registry: `oci://${registry.host}/fanout` })
    const err = await speculate(['true'], { runner })
      .apply(ws)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(QueueUnreachableError)
    expect((err as Error).message).toMatch(/cannot reach the queue at redis:\/\/127\.0\.0\.1:\d+/)
  })

  it('a worker whose start fails half-way (its second connection refused) reports it and lets its process end: nothing it opened stays', async () => {
    const full = await startRedis({ maxClients: 1 })
    try {
      const script = `
        import { startWorker } from ${JSON.stringify(join(import.meta.dirname, '..', '..', 'src', 'index.ts'))}
        await startWorker({ queue: '${full.queue}', key: '${key}', registry: 'oci://127.0.0.1:1/none', dir: ${JSON.stringify(tempDir('fanout-cache'))} })
          .catch((err) => process.stdout.write(err.name + ': ' + err.message))`
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      // the process ends by itself only when no connection is left open (a leaked one reconnects for ever)
      const code = await new Promise((resolve) => child.once('exit', resolve))
      expect(code).toBe(0)
      expect(out).toMatch(/^QueueUnreachableError: cannot reach the queue at redis:\/\/127\.0\.0\.1:\d+/)
    } finally {
      full.stop()
    }
  }, 120_000)

  it('the same job run twice gives the same image id', async () => {
    await using ws = await workspace()
    const remote = `oci://${registry.host}/fanout`
    const base = await snapshotWorkspace({ store: ws.store, dir: ws.dir })
    const pushed = await pushImage({ store: ws.store, id: base.id, remote: `${remote}:idempotent-base` })
    const worker = await startWorker({ queue, key, registry: remote, dir: tempDir('fanout-cache') })
    const q = new Queue<SignedJobData, FanoutJobResult>(QUEUE_NAME, { connection: { host: '127.0.0.1', port: Number(queue.split(':')[2]), maxRetriesPerRequest: null } })
    const events = new QueueEvents(QUEUE_NAME, { connection: { host: '127.0.0.1', port: Number(queue.split(':')[2]), maxRetriesPerRequest: null } })
    try {
      await events.waitUntilReady()
      const data: FanoutJobData = {
        group: 'a1b2c3d4e5f60718',
        index: 0,
        base: { id: base.id, remote: `${remote}@${pushed.manifest}` },
        registry: remote,
        candidate: { cmd: 'echo same > notes.md' },
        timeoutMs: null,
        isolate: true,
        httpPolicy: null,
        createdAt: new Date().toISOString(), // fixed for both runs; a signed job older than a day is refused
      }
      const run = async (id: string) => (await q.add('candidate', signJob(Buffer.from(key), id, data), { jobId: id })).waitUntilFinished(events)
      const first = await run('same-job-1')
      const second = await run('same-job-2')
      expect(first.status).toBe('succeeded')
      expect(first.image!.id).toMatch(/^sha256:/)
      expect(second.image!.id).toBe(first.image!.id)
      expect(second.image!.manifest).toBe(first.image!.manifest)
    } finally {
      await until(async () => (await q.getActiveCount()) === 0, 'the queue to settle')
      await q.obliterate({ force: true })
      await events.close()
      await q.close()
      await worker.close()
    }
  }, 120_000)

  it('a worker run by an unprivileged user (nobody) takes jobs, runs them sandboxed and pushes their images', async () => {
    await using ws = await workspace()
    const cache = tempDir('fanout-nobody')
    chownSync(cache, 65534, 65534)
    const cli = join(import.meta.dirname, '..', '..', 'bin', 'forkpoint')
    const registryUrl = `oci://${registry.host}/fanout-nobody`
    const worker = spawn(
      'setpriv',
      ['--reuid=nobody', '--regid=nogroup', '--clear-groups', cli, 'worker', '--queue', queue, '--registry', registryUrl, '--cache', join(cache, 'w')],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, FORKPOINT_QUEUE_KEY: key },
      },
    )
    let log = ''
    worker.stderr.on('data', (d: Buffer) => (log += d.toString()))
    try {
      await until(async () => log.includes('waiting for jobs') || worker.exitCode !== null, 'the worker to start')
      expect(worker.exitCode).toBeNull()
      const outcome = await speculate(['exit 3', 'echo two > notes.md'], { runner: queueRunner({ queue, key, registry: registryUrl }) }).apply(ws)
      expect(
        outcome.results.map((r) => r.status),
        JSON.stringify(outcome.results.map((r) => r.error)) + log,
      ).toEqual(['failed', 'succeeded'])
      expect(readFileSync(join(ws.dir, 'notes.md'), 'utf8')).toBe('two\n')
      expect(log).toMatch(/succeeded, image [0-9a-f]{12}/)
    } finally {
      worker.kill('SIGTERM')
      await new Promise((resolve) => (worker.exitCode === null ? worker.once('exit', resolve) : resolve(null)))
    }
  }, 120_000)

  it('a tournament judges every success here, each brought back as a branch, and commits its champion; bestOfN brings back only its winner', async () => {
    await using ws = await workspace()
    const remote = `oci://${registry.host}/fanout-tournament`
    const worker = await startWorker({ queue, key, registry: remote, dir: tempDir('fanout-tournament-cache') })
    try {
      const runner = queueRunner({ queue, key, registry: remote })
      const writeAttempt = { cmd: ['sh', '-c', 'test "$FORKPOINT_ATTEMPT" != 2 && echo "attempt $FORKPOINT_ATTEMPT" > notes.md'] }
      const judged: string[][] = []
      const attemptIn = (path: string) => Number(readFileSync(join(path, 'notes.md'), 'utf8').split(' ')[1])
      const outcome = await tournament(writeAttempt, {
        n: 4,
        runner,
        judge: (a, b) => {
          judged.push([readFileSync(join(a, 'notes.md'), 'utf8'), readFileSync(join(b, 'notes.md'), 'utf8')])
          return attemptIn(b) > attemptIn(a) ? 1 : 0
        },
      }).apply(ws)
      expect(outcome.results.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'failed', 'succeeded'])
      expect(outcome.results.map((r) => r.worker)).toEqual(Array(4).fill(worker.name)) // all ran on the worker
      expect(judged).toEqual([
        ['attempt 0\n', 'attempt 1\n'],
        ['attempt 1\n', 'attempt 3\n'],
      ])
      expect(outcome.matches).toEqual([
        { round: 1, a: 0, b: 1, winner: 1 },
        { round: 2, a: 1, b: 3, winner: 3 },
      ])
      expect(outcome).toMatchObject({ committed: true, winner: 3 })
      expect(readFileSync(join(ws.dir, 'notes.md'), 'utf8')).toBe('attempt 3\n')

      const best = await bestOfN({ ...writeAttempt, score: 'cat notes.md | cut -d" " -f2' }, { n: 3, runner }).apply(ws)
      expect(best).toMatchObject({ committed: true, winner: 1 })
      expect(best.results.map((r) => r.branch !== null)).toEqual([false, true, false])
      // results go up untagged and each exploration moves the workspace's one base tag: the repository's tags, which a push to a new tag reads, do not grow
      const tags = await (await openTransport(parseRemote(remote), { credentials: null })).listTags()
      expect(tags).toEqual([expect.stringMatching(/^fanout-base-[0-9a-f]{16}$/)])
    } finally {
      await worker.close()
    }
  }, 180_000)

  it('a worker started with allowUnsandboxed runs an isolate: false job as a plain process in a directory of the host (a Node script with a relative import)', async () => {
    await using ws = await workspace()
    writeFileSync(join(ws.dir, 'lib.mjs'), "export const greeting = 'hello'\n")
    writeFileSync(
      join(ws.dir, 'main.mjs'),
      "import { writeFileSync } from 'node:fs'\nimport { greeting } from './lib.mjs'\nwriteFileSync('notes.md', `${greeting} from ${process.cwd()}\\n`)\n",
    )
    const remote = `oci://${registry.host}/fanout-plain`
    const worker = await startWorker({ queue, key, registry: remote, dir: tempDir('fanout-plain-cache'), allowUnsandboxed: true })
    try {
      const outcome = await bestOfN({ cmd: 'node main.mjs' }, { n: 1, isolate: false, runner: queueRunner({ queue, key, registry: remote }) }).apply(ws)
      expect([outcome.committed, outcome.results[0]!.value]).toMatchObject([true, { exitCode: 0, stderr: '' }])
      expect(readFileSync(join(ws.dir, 'notes.md'), 'utf8')).toMatch(/^hello from \/(?!proc\/)\S+\n$/)
    } finally {
      await worker.close()
    }
  }, 120_000)

  it("the winner's deferred HTTP effect is sent once, here, when it commits; a loser's never", async () => {
    await using ws = await workspace()
    writeFileSync(join(ws.store.root, 'effects.json'), JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
    const post = (to: string) => `curl -s -f -X POST -H 'content-type: application/json' -d '{"to":"${to}"}' ${mail.url('/send')}`
    const remote = `oci://${registry.host}/fanout-effects`
    const worker = await startWorker({ queue, key, registry: remote, dir: tempDir('fanout-effects-cache') })
    try {
      const outcome = await speculate(
        [
          { cmd: ['sh', '-c', `${post('loser@example.com')} && exit 3`], net: 'host' },
          { cmd: ['sh', '-c', `${post('winner@example.com')} && echo sent > notes.md`], net: 'host' },
        ],
        { runner: queueRunner({ queue, key, registry: remote }) },
      ).apply(ws)
      expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'succeeded'])
      expect(readFileSync(join(ws.dir, 'notes.md'), 'utf8')).toBe('sent\n')
      expect(mail.received.map((r) => [r.method, r.path, r.body])).toEqual([['POST', '/send', '{"to":"winner@example.com"}']])
      expect(mail.received[0]!.idempotencyKey).toMatch(/^http:[0-9a-f]{64}$/)
    } finally {
      await worker.close()
    }
  }, 120_000)
})
