import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { stopSignal } from '../stopSignal.js'
import type { QueueSecretFiles } from '../../fanout/queueSecrets.js'
import { withQueueSecrets } from '../queueFlags.js'

interface WorkerFlags extends QueueSecretFiles {
  queue: string
  allowUnsandboxed?: boolean
  registry: string
  insecure?: boolean
  concurrency: string
  cache?: string
  name?: string
  lockDuration?: string
  stalledInterval?: string
}

/** `forkpoint worker`: run fan-out jobs until SIGINT or SIGTERM (running jobs go back to the queue). */
export function registerWorker(program: Command): void {
  const command = common(program.command('worker'))
    .description('run explore/speculate candidates for submitters on other machines: signed jobs from a Redis queue, images through the registry each job names')
    .requiredOption('--queue <url>', 'the Redis queue (redis[s]://[USER@]HOST:PORT[/DB]; the password from $FORKPOINT_QUEUE_PASSWORD)')
    .requiredOption('--registry <remote>', 'the registry images travel through (oci://HOST[:PORT]/REPO); jobs naming another are refused')
    .option('--insecure', 'plain HTTP to a registry that is not on loopback')
    .option('--concurrency <k>', 'jobs run at once', '1')
    .option('--cache <dir>', 'the worker cache: a store keeping the base images pulled (default ~/.cache/forkpoint/worker)')
    .option('--name <name>', 'how results name this worker (default HOST:PID)')
    .option('--lock-duration <ms>', "a job's lock (renewed while it runs); a job whose worker died is run again once it expires", '30000')
    .option('--stalled-interval <ms>', 'how often to look for jobs whose worker died', '30000')
    .option('--allow-unsandboxed', "run jobs that ask for it (a submitter's --no-isolate) unsandboxed; without it they are refused")
  withQueueSecrets(command).action(async (opts: WorkerFlags, cmd: Command) => {
    const flags = commonFlags(cmd)
    const { startWorker } = await import('../../fanout/startWorker.js')
    // loaded here, not at start: the job schema brings zod, which every other command would pay for
    const { queueSecrets } = await import('../../fanout/queueSecrets.js')
    const { describeWorkerEvent } = await import('../workerLog.js')
    const worker = await startWorker({
      queue: opts.queue,
      ...(await queueSecrets(opts, process.env)),
      allowUnsandboxed: opts.allowUnsandboxed ?? false,
      registry: opts.registry,
      insecure: opts.insecure ?? false,
      concurrency: Number(opts.concurrency),
      lockDurationMs: Number(opts.lockDuration),
      stalledIntervalMs: Number(opts.stalledInterval),
      ...(opts.cache ? { dir: opts.cache } : {}),
      ...(flags.store ? { store: flags.store } : {}),
      ...(opts.name ? { name: opts.name } : {}),
      onEvent: (e) => process.stderr.write(`${describeWorkerEvent(e)}\n`),
      env: process.env,
    })
    const stopped = stopSignal()
    if (opts.allowUnsandboxed) process.stderr.write(`worker ${worker.name}: --allow-unsandboxed: a signed job that asks for it runs UNSANDBOXED, as this user\n`)
    process.stderr.write(`worker ${worker.name}: waiting for jobs on ${worker.queue} (Ctrl-C stops it)\n`)
    if (flags.json) process.stdout.write(`${JSON.stringify({ schemaVersion: 1, worker: worker.name, ready: true })}\n`)
    await stopped
    await worker.close()
  })
}
