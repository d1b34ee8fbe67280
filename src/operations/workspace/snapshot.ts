import { z } from 'zod'
import { UsageError } from '../../errors/index.js'
import { SNAPSHOT_LAYERS } from '../../objects/Snapshot.js'
import { definedFields } from '../../util/definedFields.js'
import { defineOperation } from '../operation.js'
import { branchName, digest, scanCounts } from '../schemas.js'
import { snapshotRendering } from '../text/snapshotRendering.js'

const workspaceSnapshot = z.object({
  id: digest.describe('the new image, or HEAD when nothing changed'),
  tree: digest,
  parents: z.array(digest),
  created: z.boolean().describe('false when nothing changed since HEAD: no object was written and id is HEAD'),
  ...scanCounts,
  attached: z.partialRecord(z.enum(SNAPSHOT_LAYERS), digest).describe('the layers this snapshot was given (the others carried from its parent)'),
})

const branchSnapshot = z.object({
  id: digest.describe("the child's next image, or what its ref names when nothing changed"),
  tree: digest,
  parents: z.array(digest),
  ref: z.string().describe("the fork child's ref, moved to id"),
  created: z.boolean().describe("false when the branch holds what the child's ref already names: nothing written"),
})

/** The layers only a workspace snapshot takes: a fork's branch brings its child's own. */
const WORKSPACE_LAYERS = ['tag', 'trace', 'env', 'keepEnv', 'scrubEnv', 'effects', 'model', 'respectGitignore', 'allowEmpty'] as const

export const snapshot = defineOperation({
  name: 'snapshot',
  description:
    "Snapshot the workspace (files, and the run recorded since the last snapshot) as a new image; HEAD moves to it. With branch: a fork's branch (fork --materialize) as its child's next image, moving the child's ref, not HEAD.",
  input: {
    message: z.string().optional().describe('what this snapshot is'),
    agent: z.string().optional().describe('the agent that made it'),
    tag: z.string().optional().describe('also tag it'),
    respectGitignore: z.boolean().optional().describe('also apply .gitignore files (remembered by snapshot)'),
    allowEmpty: z.boolean().optional().describe('write a new snapshot even if nothing changed'),
    allowExternalSymlinks: z.boolean().optional().describe('record symlinks that lead out of the workspace'),
    trace: z
      .union([z.string(), z.literal(false)])
      .optional()
      .describe(
        'the trace layer: a run id (or prefix, or latest), a FILE.run.json, or a chat transcript messages.jsonl; false (--no-trace): not the run recorded since the last snapshot',
      ),
    env: z.boolean().optional().describe('record the environment, secret-looking names and values scrubbed'),
    keepEnv: z.array(z.string()).optional().describe('with env: record this variable as it is (repeatable)'),
    scrubEnv: z.array(z.string()).optional().describe('with env: scrub this variable too (repeatable)'),
    effects: z.string().optional().describe('the effects layer: a ledger object by id'),
    model: z.string().optional().describe('the model layer: a directory of adapter or model files (safetensors stored tensor by tensor)'),
    branch: branchName.optional().describe("snapshot a fork's branch (fork --materialize) as its child's next image, moving the child's ref, not HEAD"),
  },
  local: {
    fields: ['allowExternalSymlinks', 'trace', 'env', 'keepEnv', 'scrubEnv', 'model'],
    why: "the caller's environment, files and directories (a transcript, a model), and links out of the workspace, are the caller's to record",
  },
  output: z.union([workspaceSnapshot, branchSnapshot]),
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: {
    usage: 'snapshot',
    short: { message: 'm' },
    negatable: ['respectGitignore', 'trace'],
    progress: { label: 'hashing' },
    // a plain snapshot goes to the store's running service, which knows from its watcher what changed
    served: (args) => Object.entries(args).every(([field, value]) => field === 'message' || value === undefined),
    rendering: snapshotRendering,
  },
  async run(where, { branch, ...args }, { scanner, onProgress, env: callerEnv }) {
    if (branch !== undefined) {
      if (WORKSPACE_LAYERS.some((field) => args[field] !== undefined))
        throw new UsageError("snapshot --branch takes only -m, --agent and --allow-external-symlinks (the other layers are the child's)")
      const { snapshotForkBranch } = await import('../../image/snapshotForkBranch.js')
      return snapshotForkBranch({ ...where, branch, message: args.message, agent: args.agent, allowExternalSymlinks: args.allowExternalSymlinks })
    }
    const { snapshotAgent } = await import('../../image/snapshotAgent.js')
    const progress = onProgress && ((done: number, total: number) => onProgress({ done, total }))
    return snapshotAgent({
      ...where,
      ...definedFields({ ...args, env: args.env ? callerEnv : undefined }),
      ...(scanner ? { scanner } : {}),
      ...(progress ? { onProgress: progress } : {}),
    })
  },
})
