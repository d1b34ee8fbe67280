import { z } from 'zod'
import { UsageError } from '../../errors/index.js'
import { definedFields } from '../../util/definedFields.js'
import type { CommandPatternArgs } from '../../patterns/commandPatternArgs.js'
import type { StoreLocator } from '../../store/findStore.js'
import { branchCommit } from '../schemas.js'
import type { OperationContext } from '../operation.js'

/** Candidates a pattern runs at most: each is a branch and a sandbox, whoever asks. */
export const MAX_CANDIDATES = 256

/** What `explore` and `speculate` take besides their commands. */
export const patternInput = {
  timeout: z.string().optional().describe('wall-clock limit per candidate, e.g. 60s, 500ms, 2m'),
  parallel: z.number().int().min(1).max(MAX_CANDIDATES).optional().describe('candidates running at once (default: the number of cores)'),
  net: z.enum(['none', 'host']).optional().describe('network inside the sandboxes (default none)'),
  isolate: z.boolean().optional().describe('sandbox the commands (the default); false (--no-isolate): plain processes in the branch directories, directories of the host'),
  allowUnsandboxedEffects: z
    .boolean()
    .optional()
    .describe('with isolate false under an effects policy (.forkpoint/effects.json): run anyway; requests made around the proxy are not held'),
  queue: z
    .string()
    .optional()
    .describe('run the candidates on forkpoint workers taking jobs from this Redis queue (redis[s]://[USER@]HOST:PORT); needs registry and the queue key'),
  registry: z.string().optional().describe('with queue: the registry images travel through (oci://HOST[:PORT]/REPO)'),
  insecure: z.boolean().optional().describe('with queue: plain HTTP to a registry that is not on loopback'),
  workerTimeout: z
    .union([z.string(), z.literal(false)])
    .optional()
    .describe('with queue: say so on stderr when no worker has taken a job in this long (default 30s; it keeps waiting); false: never'),
  queueKeyFile: z.string().optional().describe('the key jobs are signed with, shared by submitters and workers (default: $FORKPOINT_QUEUE_KEY)'),
  queueCaFile: z.string().optional().describe('with rediss://: the CA certificate (PEM) the queue server is checked with (default: the system CAs)'),
}

/** The fields only the command line gives, and why. */
export const patternLocal = {
  fields: ['isolate', 'allowUnsandboxedEffects', 'queue', 'registry', 'insecure', 'workerTimeout', 'queueKeyFile', 'queueCaFile'] as const,
  why: "running unsandboxed is the caller's own machine's risk to take; a queue, a registry and the key files are the caller's to name, not a request's",
}

const commandValue = z.object({
  exitCode: z.number().describe('128 + N when killed by signal N'),
  stdout: z.string(),
  stderr: z.string(),
  changedPaths: z.array(z.string()),
  durationMs: z.number(),
})

const candidate = z.object({
  index: z.number(),
  status: z.enum(['succeeded', 'failed', 'error', 'timeout', 'cancelled']),
  success: z.boolean().describe('only a success can win'),
  score: z.number().nullable().describe('null when it never reported (error, timeout, cancelled)'),
  value: commandValue.optional().describe("the command's exit code, output and changed paths"),
  error: z.string().optional().describe('why it failed'),
  branch: z.string().nullable().describe('the branch it ran in (gone once the pattern returns), or null when it never started'),
  branchPath: z.string().nullable(),
  durationMs: z.number(),
  depth: z.number().optional(),
  parent: z.number().optional(),
  feedback: z.string().optional(),
  worker: z.string().optional().describe('fan-out: the worker that ran it'),
  image: z.string().optional().describe('fan-out: the image it pushed'),
})

/** What a pattern over commands did: every candidate, the winner and its commit. */
export const patternOutcome = z.object({
  pattern: z.string().describe('bestOfN for explore, speculate for speculate'),
  committed: z.boolean().describe("true when the winner's changes were applied to the workspace"),
  winner: z.number().optional().describe('the index of the committed candidate'),
  commit: branchCommit.optional(),
  results: z.array(candidate),
  warnings: z.array(z.string()).optional().describe('how the candidates ran that the caller must hear (unsandboxed under an effects policy)'),
})

type PatternArgs = { [K in keyof typeof patternInput]?: z.infer<(typeof patternInput)[K]> | undefined }

/**
 * The library's arguments for a pattern over commands: the caller's cancel and environment,
 * and with a queue, a runner whose events go to the caller (a no-worker notice always, the
 * rest as progress lines).
 * @throws {UsageError} a queue without a registry, or the other way round
 */
export async function commandPatternArgs(where: StoreLocator, args: PatternArgs, ctx: OperationContext): Promise<CommandPatternArgs> {
  return {
    ...where,
    signal: ctx.signal,
    env: ctx.env,
    ...definedFields({
      timeout: args.timeout,
      maxParallel: args.parallel,
      net: args.net,
      isolate: args.isolate,
      allowUnsandboxedEffects: args.allowUnsandboxedEffects || undefined,
    }),
    ...(await queueRunnerOf(args, ctx)),
  }
}

async function queueRunnerOf(args: PatternArgs, ctx: OperationContext): Promise<Pick<CommandPatternArgs, 'runner'>> {
  if (args.queue === undefined && args.registry === undefined) return {}
  if (args.queue === undefined || args.registry === undefined)
    throw new UsageError('--queue and --registry go together: the queue carries the jobs, the registry the images', { option: args.queue ? 'registry' : 'queue' })
  const [{ queueRunner }, { queueSecrets }, { describeFanoutEvent }, { parseDuration }] = await Promise.all([
    import('../../fanout/queueRunner.js'),
    import('../../fanout/queueSecrets.js'),
    import('../text/fanoutEvent.js'),
    import('../../sandbox/limits.js'),
  ])
  const notice = args.workerTimeout === undefined ? {} : { noWorkerNoticeMs: args.workerTimeout === false ? 0 : parseDuration(args.workerTimeout, '--worker-timeout') }
  return {
    runner: queueRunner({
      queue: args.queue,
      ...(await queueSecrets(args, ctx.env)),
      registry: args.registry,
      insecure: args.insecure ?? false,
      onEvent: (event) => (event.type === 'no-worker' ? ctx.notice?.(describeFanoutEvent(event)) : ctx.onProgress?.({ line: describeFanoutEvent(event) })),
      ...notice,
    }),
  }
}
