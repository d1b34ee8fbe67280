import { hostname, homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Job, WaitingError as BullMQWaitingError } from 'bullmq'
import type { Redis } from 'ioredis'
import { Workspace } from '../branch/Workspace.js'
import { parseRemote } from '../registry/transport/parseRemote.js'
import { positiveCount } from '../patterns/patternOptions.js'
import { messageOf } from '../patterns/runCandidates.js'
import type { InvalidJobError } from '../errors/index.js'
import { type FanoutJobData, type FanoutJobResult, CANCEL_CHANNEL, QUEUE_NAME, cancelledKey } from './FanoutJob.js'
import { type SignedJobData, type SignedJobResult, queueKey, signResult, verifyJob } from './jobSignature.js'
import { connectRedis, connectionOptions, parseQueueUrl } from './queueConnection.js'
import { type JobContext, runJob } from './runJob.js'
import { loadOptional } from '../util/optionalPackage.js'

export interface StartWorkerOptions {
  /** `redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB]` */
  queue: string
  /** The key submitters sign jobs with (at least 16 bytes): a job not signed with it is refused, and results are signed with it. */
  key: string | Buffer
  /** The queue's password when the URL has none, and the CA a `rediss://` server's certificate is checked with (PEM). */
  queuePassword?: string
  queueCa?: string
  /** Run a job that asks for it (`isolate: false`) unsandboxed; without this, such a job is refused. */
  allowUnsandboxed?: boolean
  /** The registry images travel through (`oci://HOST[:PORT]/REPO`): jobs naming another are refused. */
  registry: string
  /** Plain HTTP to a registry that is not on loopback. */
  insecure?: boolean
  /** Jobs run at once (default 1). */
  concurrency?: number
  /** The worker's cache: a workspace whose store keeps the base images pulled (default `~/.cache/forkpoint/worker`). */
  dir?: string
  /** The store of that cache (default: the `.forkpoint/` of `dir`). */
  store?: string
  /** How the worker names itself in results and messages (default `HOST:PID`). */
  name?: string
  /**
   * BullMQ's stalled-job handling: a job's lock lasts `lockDurationMs` (renewed while it
   * runs); every `stalledIntervalMs` workers look for jobs whose lock expired (their worker
   * died) and put them back in the queue, at most `maxStalledCount` times.
   * @default 30000, 30000, 2
   */
  lockDurationMs?: number
  stalledIntervalMs?: number
  maxStalledCount?: number
  /** Each job as it starts and ends. */
  onEvent?: (event: WorkerEvent) => void
  /** What candidates start with, and where FORKPOINT_KEY is read from: as a pattern's `env`. @default process.env */
  env?: NodeJS.ProcessEnv
}

export type WorkerEvent =
  { type: 'started'; job: string; index: number } | { type: 'finished'; job: string; index: number; result: FanoutJobResult } | { type: 'failed'; job: string; error: string }

/** A running worker. `close` kills its running candidates and puts their jobs back in the queue for other workers. */
export interface FanoutWorker extends AsyncDisposable {
  readonly name: string
  /** The queue's URL without its password. */
  readonly queue: string
  close(): Promise<void>
}

/**
 * `forkpoint worker`: take candidate jobs from the queue and run them, `concurrency` at a
 * time (see runJob). A submitter's cancellation (Redis pub/sub, and a key for jobs not yet
 * started) kills the exploration's running candidates here at once. A job runs only when
 * signed with `key` and within its schema (else it fails, naming why, and nothing of it
 * runs), and always sandboxed unless `allowUnsandboxed`.
 * @throws {QueueUnreachableError} @throws {UsageError} a bad queue URL, key or count
 * @throws {MissingPackageError} bullmq or ioredis is not installed
 */
export async function startWorker(options: StartWorkerOptions): Promise<FanoutWorker> {
  const { Worker, WaitingError } = await loadOptional('queue', () => import('bullmq'))
  const at = parseQueueUrl(options.queue, { password: options.queuePassword, ca: options.queueCa })
  const key = queueKey(options.key)
  parseRemote(options.registry)
  const concurrency = positiveCount(options.concurrency ?? 1, 'concurrency')
  const lockDuration = positiveCount(options.lockDurationMs ?? 30_000, 'lock duration (ms)')
  const stalledInterval = positiveCount(options.stalledIntervalMs ?? 30_000, 'stalled interval (ms)')
  const name = options.name ?? `${hostname()}:${process.pid}`
  const workspace = await Workspace.open({ dir: resolve(options.dir ?? join(homedir(), '.cache', 'forkpoint', 'worker')), store: options.store })
  /** What the worker holds, released in reverse: open connections would keep the process alive, reconnecting. */
  const opened: Array<() => unknown> = [() => workspace[Symbol.asyncDispose]()]
  const release = async () => {
    for (let undo = opened.pop(); undo; undo = opened.pop()) await undo()
  }
  try {
    const redis = await connectRedis(at)
    opened.push(() => redis.disconnect())
    const subscriber = await connectRedis(at)
    opened.push(() => subscriber.disconnect())
    const running = new Map<string, Set<AbortController>>()
    let closing: Promise<void> | null = null
    subscriber.on('message', (_channel: string, group: string) => {
      for (const controller of running.get(group) ?? []) controller.abort(new DOMException('cancelled: the exploration has its winner', 'AbortError'))
    })
    await subscriber.subscribe(CANCEL_CHANNEL)
    const job = jobProcessor({ options, key, name, workspace, redis, running, closing: () => closing !== null, WaitingError })
    const worker = new Worker<SignedJobData, SignedJobResult>(QUEUE_NAME, job, {
      connection: connectionOptions(at),
      concurrency,
      lockDuration,
      stalledInterval,
      maxStalledCount: options.maxStalledCount ?? 2,
      name,
    })
    opened.push(() => worker.close(closing === null)) // a start that failed forces it: no job to wait for
    worker.on('error', () => undefined) // connection trouble: BullMQ reconnects
    await worker.waitUntilReady()
    const close = () =>
      (closing ??= (async () => {
        for (const set of running.values()) for (const c of set) c.abort(new DOMException('the worker is shutting down', 'AbortError'))
        await release()
      })())
    return { name, queue: at.display, close, [Symbol.asyncDispose]: close }
  } catch (err) {
    await release().catch(() => undefined) // the start's own error is the one to report
    throw err
  }
}

/** The worker's job function: runJob, unless the exploration was cancelled before the job started; a job cut short by the worker's shutdown goes back to the queue. */
function jobProcessor({
  options,
  key,
  name,
  workspace,
  redis,
  running,
  closing,
  WaitingError,
}: {
  options: StartWorkerOptions
  key: Buffer
  name: string
  workspace: Workspace
  redis: Redis
  running: Map<string, Set<AbortController>>
  closing: () => boolean
  /** BullMQ's, as the worker loaded it: thrown, it tells BullMQ the job went back to the queue. */
  WaitingError: typeof BullMQWaitingError
}): (job: Job<SignedJobData, SignedJobResult>, token?: string, stop?: AbortSignal) => Promise<SignedJobResult> {
  const pulls: JobContext['pulls'] = new Map()
  return async (job, token, stop) => {
    let data: FanoutJobData
    try {
      data = verifyJob(key, job.id, job.data, { allowUnsandboxed: options.allowUnsandboxed ?? false })
    } catch (err) {
      options.onEvent?.({ type: 'failed', job: (err as InvalidJobError).data.job, error: messageOf(err) })
      throw err
    }
    const { group, index } = data
    const controller = new AbortController()
    stop?.addEventListener('abort', () => controller.abort(stop.reason), { once: true })
    const members = running.get(group) ?? new Set()
    running.set(group, members.add(controller))
    try {
      if ((await redis.exists(cancelledKey(group))) === 1) return signResult(key, job.id!, cancelledBeforeStart(name))
      options.onEvent?.({ type: 'started', job: job.id!, index })
      // a progress line lost to a Redis hiccup costs the submitter a line, not the job
      const ctx: JobContext = {
        workspace,
        worker: name,
        registry: options.registry,
        insecure: options.insecure ?? false,
        pulls,
        env: options.env,
        report: (p) => void job.updateProgress(p).catch(() => undefined),
      }
      const result = await runJob(data, ctx, controller.signal)
      if (closing()) {
        await job.moveToWait(token) // cut short by the shutdown, not by its exploration: another worker runs it
        throw new WaitingError()
      }
      options.onEvent?.({ type: 'finished', job: job.id!, index, result })
      return signResult(key, job.id!, result)
    } catch (err) {
      if (err instanceof WaitingError) throw err
      options.onEvent?.({ type: 'failed', job: job.id!, error: messageOf(err) })
      throw err
    } finally {
      members.delete(controller)
      if (members.size === 0) running.delete(group)
    }
  }
}

function cancelledBeforeStart(worker: string): FanoutJobResult {
  return { status: 'cancelled', score: null, error: 'cancelled before it started: the exploration has its winner', image: null, deferred: 0, worker, durationMs: 0 }
}
