/**
 * `npm run bench -- fanout [--quick]`: 64 candidates through `bestOfN` with a queue runner
 * on 1, 2 and 4 `forkpoint worker` processes (each one job at a time, all on this machine,
 * Redis and docker-registry on 127.0.0.1): trivial candidates (`true`) and candidates of
 * 1 s of work (`sleep 1`: waiting, not CPU, so 4 workers fit on 2 cores). Overhead per job:
 * the wall time of the 64 jobs times the workers, over 64, minus the candidate's own time
 * (its sandboxed run as the worker measured it). Scaling efficiency on k workers: T1 / (k × Tk).
 * Beside each, in the same run, the engines' floor per job on k workers: the same 64 jobs
 * through BullMQ to k plain workers that each wait the candidate's time and put a small
 * result image in the registry (fanoutFloorWorker.ts): the part of the overhead no
 * fan-out on these engines avoids.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { Queue, QueueEvents } from 'bullmq'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type CommandValue, Workspace, bestOfN, initWorkspace, queueRunner } from '../src/index.js'
import { until } from '../test/helpers/until.js'
import { startRedis } from '../test/helpers/redisServer.js'
import { startRegistry } from '../test/helpers/registryServer.js'
import { report } from './harness.js'

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forkpoint')
const N = 64
/** The queue key the bench's submitter and workers share. */
const QUEUE_KEY = randomBytes(32).toString('hex')

/** k processes of `argv(i)`, each ready once its stderr says it waits for jobs. */
function startProcesses(k: number, argv: (i: number) => string[], label: string): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from({ length: k }, async (_, i) => {
      const child = spawn(process.execPath, argv(i), { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, FORKPOINT_QUEUE_KEY: QUEUE_KEY } })
      let log = ''
      child.stderr.on('data', (d: Buffer) => (log += d.toString()))
      await until(() => log.includes('waiting for jobs'), `${label} ${i}`)
      return child
    }),
  )
}

async function stopProcesses(children: ChildProcess[]): Promise<void> {
  for (const c of children) c.kill('SIGTERM')
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode === null && c.signalCode === null ? c.once('exit', r) : r(null)))))
}

const startWorkers = (k: number, root: string, queue: string, registry: string) =>
  startProcesses(k, (i) => [CLI, 'worker', '--queue', queue, '--registry', registry, '--cache', join(root, `cache-${i}`), '--name', `w${i}`], 'worker')

const FLOOR_WORKER = join(dirname(fileURLToPath(import.meta.url)), 'fanoutFloorWorker.ts')

/** The engines' own time per job on k workers: N jobs queued at once and waited for as queueRunner does, each waiting `sleepMs` (the candidate's time, not counted) and putting a small image in the registry. */
async function floorPerJob(k: number, sleepMs: number, redisPort: number, registryHost: string): Promise<number> {
  const queueName = `floor-${k}`
  const connection = { host: '127.0.0.1', port: redisPort }
  const queue = new Queue(queueName, { connection })
  const events = new QueueEvents(queueName, { connection })
  for (const emitter of [queue, events]) emitter.setMaxListeners(N + 10) // one waiter per job
  const workers = await startProcesses(k, () => ['--import', 'tsx', FLOOR_WORKER, queueName, String(redisPort), registryHost, 'floor'], 'floor worker')
  try {
    await events.waitUntilReady()
    const started = performance.now()
    const jobs = await queue.addBulk(Array.from({ length: N }, (_, i) => ({ name: 'floor', data: { index: i, sleepMs } })))
    await Promise.all(jobs.map((j) => j.waitUntilFinished(events)))
    return ((performance.now() - started) * k) / N - sleepMs
  } finally {
    await stopProcesses(workers)
    await events.close()
    await queue.obliterate({ force: true })
    await queue.close()
  }
}

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-fanout-'))
  const redis = await startRedis()
  const registryServer = await startRegistry({ dir: join(root, 'registry') })
  const queue = redis.queue
  const registry = `oci://${registryServer.host}/bench`
  const dir = join(root, 'ws')
  await initWorkspace({ dir })
  writeFileSync(join(dir, 'plan.md'), 'v1\n')
  const ws = await Workspace.open({ dir })
  const rows: Array<Record<string, string | number>> = []
  try {
    for (const [label, cmd, sleepMs] of [
      ['trivial (true)', 'true', 0],
      ['1 s of work (sleep 1)', 'sleep 1', 1000],
    ] as const) {
      let t1 = 0
      for (const k of quick ? [1, 2] : [1, 2, 4]) {
        const floor = await floorPerJob(k, sleepMs, redis.port, registryServer.host)
        const workers = await startWorkers(k, root, queue, registry)
        try {
          const started = performance.now()
          const outcome = await bestOfN<CommandValue>(cmd, { n: N, runner: queueRunner({ queue, key: QUEUE_KEY, registry }) }).apply(ws)
          const wall = performance.now() - started
          if (outcome.results.some((r) => r.status !== 'succeeded')) throw new Error(`${label}: not every job succeeded`)
          const own = outcome.results.reduce((s, r) => s + r.value!.durationMs, 0) / N
          if (k === 1) t1 = wall
          const overhead = (wall * k) / N - own
          rows.push({
            candidates: label,
            workers: k,
            wall_s: wall / 1000,
            candidate_own_ms: own,
            overhead_per_job_ms: overhead,
            engines_floor_per_job_ms: floor,
            overhead_vs_floor: overhead / floor,
            scaling_efficiency: t1 / (k * wall),
          })
        } finally {
          await stopProcesses(workers)
        }
      }
    }
  } finally {
    redis.stop()
    await registryServer.stop()
    rmSync(root, { recursive: true, force: true })
  }
  report('fanout', `fan-out: ${N} candidates through bestOfN + queueRunner on 1, 2, 4 worker processes (${availableParallelism()} cores)`, rows, {
    cores: availableParallelism(),
    n: N,
  })
}
