import { type Command, Option } from 'commander'
import { UsageError } from '../errors/index.js'
import type { CandidateRunner } from '../patterns/runCandidates.js'
import { parseDuration } from '../sandbox/limits.js'
import type { NetMode } from '../sandbox/runSandboxed.js'
import { type QueueSecretFlags, queueSecrets, withQueueSecrets } from './queueFlags.js'

/** The flags `speculate` and `explore` share. */
export interface PatternFlags extends QueueSecretFlags {
  timeout?: string
  parallel?: string
  net?: NetMode
  isolate?: boolean
  /** With --no-isolate under an effects policy: run anyway, effects may escape. */
  allowUnsandboxedEffects?: boolean
  /** Fan-out: the queue and the registry; with both, the candidates run on `forkpoint worker`s. */
  queue?: string
  registry?: string
  insecure?: boolean
  /** With --queue: how long to wait for a worker to take a job before saying none has; false (`--no-worker-timeout`) for never. */
  workerTimeout?: string | false
}

export function withPatternOptions(cmd: Command): Command {
  cmd
    .option('--timeout <duration>', 'wall-clock limit per candidate, e.g. 60s, 500ms, 2m')
    .option('--parallel <k>', 'candidates running at once (default: number of cores)')
    .addOption(new Option('--net <mode>', 'network inside the sandboxes').choices(['none', 'host']).default('none'))
    .option('--no-isolate', 'run the commands as plain processes in the branch directories (directories of the host), without a sandbox')
    .option('--allow-unsandboxed-effects', 'with --no-isolate under an effects policy (.forkpoint/effects.json): run anyway; requests made around the proxy are not held')
    .option('--queue <url>', 'run the candidates on forkpoint workers taking jobs from this Redis queue (redis[s]://[USER@]HOST:PORT); needs --registry and the queue key')
    .option('--registry <remote>', 'with --queue: the registry images travel through (oci://HOST[:PORT]/REPO)')
    .option('--insecure', 'with --queue: plain HTTP to a registry that is not on loopback')
    .option('--worker-timeout <duration>', 'with --queue: say so on stderr when no worker has taken a job in this long (default 30s; it keeps waiting)')
    .option('--no-worker-timeout', 'with --queue: never say that no worker has taken a job')
  return withQueueSecrets(cmd)
}

export function patternFlags(opts: PatternFlags): {
  timeout?: string
  maxParallel?: number
  net?: NetMode
  isolate?: boolean
  allowUnsandboxedEffects?: boolean
  env: NodeJS.ProcessEnv
} {
  if ((opts.queue === undefined) !== (opts.registry === undefined))
    throw new UsageError('--queue and --registry go together: the queue carries the jobs, the registry the images', { option: opts.queue ? 'registry' : 'queue' })
  return {
    ...(opts.timeout ? { timeout: opts.timeout } : {}),
    ...(opts.parallel ? { maxParallel: Number(opts.parallel) } : {}),
    ...(opts.net ? { net: opts.net } : {}),
    ...(opts.isolate === undefined ? {} : { isolate: opts.isolate }),
    ...(opts.allowUnsandboxedEffects ? { allowUnsandboxedEffects: true } : {}),
    env: process.env,
  }
}

/** Ctrl-C / SIGTERM cancel the pattern (candidates killed, branches aborted) instead of killing forkpoint mid-way. */
export async function cancelOnSignals<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const cancel = () => controller.abort()
  process.once('SIGINT', cancel)
  process.once('SIGTERM', cancel)
  try {
    return await fn(controller.signal)
  } finally {
    process.off('SIGINT', cancel)
    process.off('SIGTERM', cancel)
  }
}

/**
 * `--queue` and `--registry`: a queue runner whose progress goes to stderr, one line an event;
 * under --json only the notice that no worker has taken a job.
 */
export async function runnerFlags(opts: PatternFlags, json: boolean): Promise<{ runner?: CandidateRunner }> {
  if (opts.queue === undefined || opts.registry === undefined) return {}
  const { queueRunner } = await import('../fanout/queueRunner.js')
  const { describeFanoutEvent } = await import('./fanoutProgress.js')
  const onEvent = (event: Parameters<typeof describeFanoutEvent>[0]) => {
    if (!json || event.type === 'no-worker') process.stderr.write(`${describeFanoutEvent(event)}\n`)
  }
  const secrets = await queueSecrets(opts)
  const notice = opts.workerTimeout === undefined ? {} : { noWorkerNoticeMs: opts.workerTimeout === false ? 0 : parseDuration(opts.workerTimeout, '--worker-timeout') }
  return { runner: queueRunner({ queue: opts.queue, ...secrets, registry: opts.registry, insecure: opts.insecure ?? false, onEvent, ...notice }) }
}
