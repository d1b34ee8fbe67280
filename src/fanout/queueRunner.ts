import { randomBytes } from 'node:crypto'
import type { Job } from 'bullmq'
import { Workspace } from '../branch/Workspace.js'
import { loadHttpPolicy } from '../effects/httpPolicy.js'
import { FunctionCandidateError, UsageError } from '../errors/index.js'
import type { Attempt, CandidateRunner, CandidateSpec, RunCandidatesArgs } from '../patterns/runCandidates.js'
import type { CandidateStatus } from '../patterns/types.js'
import { parseRemote } from '../registry/transport/parseRemote.js'
import { type FanoutJobProgress, type PortableCandidate, QUEUE_NAME, cancelledKey, jobId } from './FanoutJob.js'
import { type SignedJobData, type SignedJobResult, queueKey, signJob } from './jobSignature.js'
import { collectJobs } from './collectJobs.js'
import { fetchResult } from './fetchResult.js'
import { noticeIdleQueue } from './noticeIdleQueue.js'
import { pushBase } from './pushBase.js'
import { connectRedis, connectionOptions, parseQueueUrl } from './queueConnection.js'
import { loadOptional } from '../util/optionalPackage.js'

export interface QueueRunnerOptions {
  /** `redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB]`: the BullMQ queue workers take jobs from. */
  queue: string
  /** The key jobs are signed with and results checked with, shared with the workers (at least 16 bytes). */
  key: string | Buffer
  /** The queue's password when the URL has none, and the CA a `rediss://` server's certificate is checked with (PEM). */
  queuePassword?: string
  queueCa?: string
  /** Where the base image goes and the results come from: `oci://HOST[:PORT]/REPO` (any remote every worker reaches). */
  registry: string
  /** Plain HTTP to a registry that is not on loopback (workers decide that for themselves: `forkpoint worker --insecure`). */
  insecure?: boolean
  /** Progress as it happens: the base pushed, jobs queued, each job's phase on its worker, each result, the cancellation of the losers. */
  onEvent?: (event: FanoutEvent) => void
  /** After this long with no job taken by a worker, a `no-worker` event (the fan-out keeps waiting); 0 for none. @default NO_WORKER_NOTICE_MS */
  noWorkerNoticeMs?: number
}

/** How long a fan-out waits for a worker to take a job before it says that none has. */
const NO_WORKER_NOTICE_MS = 30_000

export type FanoutEvent =
  | { type: 'base'; id: string; sentBytes: number }
  | { type: 'queued'; group: string; jobs: number }
  | { type: 'progress'; index: number; phase: FanoutJobProgress['phase']; worker: string }
  | { type: 'finished'; index: number; status: CandidateStatus; worker: string | null; error?: string }
  | { type: 'cancelling'; reason: string }
  | { type: 'no-worker'; waitedMs: number; jobs: number }

/**
 * Run `speculate`, `bestOfN` and `tournament` candidates on other machines: `forkpoint
 * worker`s taking jobs from a Redis queue (BullMQ), images through a registry. The
 * workspace goes up as a base image (an incremental push); each candidate becomes a job;
 * the first success of a first-wins race cancels the others on every worker at once; the
 * best success's image (every kept success's, unless the pattern wants only the best: a
 * tournament judges them all here) is pulled (only what the store lacks) and applied to a
 * local branch, which the pattern commits three-way like any other, running the deferred
 * effects of its outbox once.
 * Only command candidates travel: a function given to it is a FunctionCandidateError. Each
 * job is signed with `key` (HMAC-SHA256 over its id and data); a result not signed with it
 * is an error of its candidate, never an image to pull. When no worker has taken a job
 * `noWorkerNoticeMs` after they were queued, a `no-worker` event says so; it keeps waiting.
 * @example
 * await speculate(['make fix-a', 'make fix-b'], { runner: queueRunner({ queue: 'redis://10.0.0.5:6379', key, registry: 'oci://10.0.0.5:5000/agents' }) }).apply(ws)
 * @throws {UsageError} a bad queue URL, key or registry (and, when it runs, MissingPackageError: bullmq or ioredis is not installed)
 */
export function queueRunner(options: QueueRunnerOptions): CandidateRunner {
  const at = parseQueueUrl(options.queue, { password: options.queuePassword, ca: options.queueCa })
  const key = queueKey(options.key)
  if (!options.registry) throw new UsageError('a queue runner needs a registry too: --registry oci://HOST/REPO', { option: 'registry' })
  parseRemote(options.registry)
  const emit = options.onEvent ?? (() => undefined)
  const insecure = options.insecure ?? false
  const noticeMs = options.noWorkerNoticeMs ?? NO_WORKER_NOTICE_MS

  return async ({ pool, specs, options: resolved, signal, firstWins = false, keep = (r) => r.success, bestOnly = false }: RunCandidatesArgs): Promise<Attempt[]> => {
    const candidates = specs.map(portable)
    const ws = pool.target
    if (!(ws instanceof Workspace)) throw new UsageError(`a fan-out runs from a workspace, not from branch ${ws.name}`, { name: ws.name })
    const { Queue, QueueEvents } = await loadOptional('queue', () => import('bullmq'))
    const redis = await connectRedis(at)
    const queue = new Queue<SignedJobData, SignedJobResult>(QUEUE_NAME, { connection: connectionOptions(at) })
    const events = new QueueEvents(QUEUE_NAME, { connection: connectionOptions(at) })
    const group = randomBytes(8).toString('hex')
    for (const emitter of [queue, events]) emitter.setMaxListeners(specs.length + 10) // one waiter per job
    let jobs: Array<Job<SignedJobData, SignedJobResult>> = []
    try {
      await events.waitUntilReady()
      const base = await pushBase(ws, options.registry, insecure)
      emit({ type: 'base', id: base.id, sentBytes: base.sentBytes })
      const common = {
        group,
        base: { id: base.id, remote: base.remote },
        registry: options.registry,
        timeoutMs: resolved.timeoutMs,
        isolate: resolved.isolate,
        httpPolicy: await loadHttpPolicy(ws.store),
        createdAt: new Date().toISOString(),
      }
      const indexOf = new Map(specs.map((s) => [jobId(group, s.index), s.index]))
      events.on('progress', ({ jobId: id, data }) => {
        const index = indexOf.get(id)
        const p = data as FanoutJobProgress
        if (index !== undefined && typeof p === 'object' && p !== null) emit({ type: 'progress', index, phase: p.phase, worker: p.worker })
      })
      jobs = await queue.addBulk(
        specs.map((s, i) => {
          const id = jobId(group, s.index)
          return { name: 'candidate', data: signJob(key, id, { ...common, index: s.index, candidate: candidates[i]! }), opts: { jobId: id, attempts: 1 } }
        }),
      )
      emit({ type: 'queued', group, jobs: jobs.length })
      const stopNotice = noticeIdleQueue({ jobs, afterMs: noticeMs, notice: () => emit({ type: 'no-worker', waitedMs: noticeMs, jobs: jobs.length }) })
      const { results, manifests } = await collectJobs({ jobs, key, events, redis, group, firstWins, signal, emit }).finally(stopNotice)
      const kept = results.filter((r) => r.success && keep(r)).sort((a, b) => b.score! - a.score! || a.index - b.index)
      const attempts: Attempt[] = results.map((result) => ({ result, branch: null }))
      for (const result of bestOnly ? kept.slice(0, 1) : kept) {
        if (signal?.aborted) break
        const branch = await fetchResult({ pool, ws, base, result, remote: `${options.registry}@${manifests.get(result.index)}`, insecure })
        Object.assign(result, { branch: branch.name, branchPath: branch.path })
        attempts[results.indexOf(result)]!.branch = branch
      }
      return attempts
    } finally {
      await Promise.all(jobs.map((j) => j.remove().catch(() => undefined))) // nothing of the jobs stays in Redis, whatever happened
      await redis.del(cancelledKey(group)).catch(() => undefined)
      redis.disconnect()
      await events.close()
      await queue.close()
    }
  }
}

/** What of a candidate travels; a function cannot. */
function portable(spec: CandidateSpec): PortableCandidate {
  const c = spec.candidate
  if (typeof c === 'function')
    throw new FunctionCandidateError(`candidate ${spec.index} is a function: only command candidates can run on other machines (give a command line or { cmd })`, {
      index: spec.index,
    })
  if (typeof c === 'string') return { cmd: c }
  const { cmd, score, net, env, memory, pids, cpu } = c
  return {
    cmd,
    ...(score === undefined ? {} : { score }),
    ...(net ? { net } : {}),
    ...(env ? { env: stringEnv(env) } : {}),
    ...(memory === undefined ? {} : { memory }),
    ...(pids === undefined ? {} : { pids }),
    ...(cpu === undefined ? {} : { cpu }),
  }
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'))
}
