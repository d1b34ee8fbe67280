import { type Command, Option } from 'commander'
import { UsageError } from '../errors/index.js'
import type { CandidateRunner } from '../patterns/runCandidates.js'
import type { NetMode } from '../sandbox/runSandboxed.js'
import { type QueueSecretFlags, queueSecrets, withQueueSecrets } from './queueFlags.js'

/** The flags `speculate` and `explore` share. */
export interface PatternFlags extends QueueSecretFlags {
  timeout?: string
  parallel?: string
  net?: NetMode
  isolate?: boolean
  /** Fan-out: the queue and the registry; with both, the candidates run on `forkpoint worker`s. */
  queue?: string
  registry?: string
  insecure?: boolean
}

export function withPatternOptions(cmd: Command): Command {
  cmd
    .option('--timeout <duration>', 'wall-clock limit per candidate, e.g. 60s, 500ms, 2m')
    .option('--parallel <k>', 'candidates running at once (default: number of cores)')
    .addOption(new Option('--net <mode>', 'network inside the sandboxes').choices(['none', 'host']).default('none'))
    .option('--no-isolate', 'run the commands as plain processes in the branch directories, without a sandbox')
    .option('--queue <url>', 'run the candidates on forkpoint workers taking jobs from this Redis queue (redis[s]://[USER@]HOST:PORT); needs --registry and the queue key')
    .option('--registry <remote>', 'with --queue: the registry images travel through (oci://HOST[:PORT]/REPO)')
    .option('--insecure', 'with --queue: plain HTTP to a registry that is not on loopback')
  return withQueueSecrets(cmd)
}

export function patternFlags(opts: PatternFlags): { timeout?: string; maxParallel?: number; net?: NetMode; isolate?: boolean } {
  if ((opts.queue === undefined) !== (opts.registry === undefined))
    throw new UsageError('--queue and --registry go together: the queue carries the jobs, the registry the images', { option: opts.queue ? 'registry' : 'queue' })
  return {
    ...(opts.timeout ? { timeout: opts.timeout } : {}),
    ...(opts.parallel ? { maxParallel: Number(opts.parallel) } : {}),
    ...(opts.net ? { net: opts.net } : {}),
    ...(opts.isolate === undefined ? {} : { isolate: opts.isolate }),
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

/** `--queue` and `--registry`: a queue runner whose progress goes to stderr, one line an event (nothing under --json). */
export async function runnerFlags(opts: PatternFlags, json: boolean): Promise<{ runner?: CandidateRunner }> {
  if (opts.queue === undefined || opts.registry === undefined) return {}
  const { queueRunner } = await import('../fanout/queueRunner.js')
  const { describeFanoutEvent } = await import('./fanoutProgress.js')
  const onEvent = json ? undefined : (event: Parameters<typeof describeFanoutEvent>[0]) => process.stderr.write(`${describeFanoutEvent(event)}\n`)
  const secrets = await queueSecrets(opts)
  return { runner: queueRunner({ queue: opts.queue, ...secrets, registry: opts.registry, insecure: opts.insecure ?? false, ...(onEvent ? { onEvent } : {}) }) }
}
