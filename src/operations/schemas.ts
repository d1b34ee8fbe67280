import { z } from 'zod'
import { DigestSchema } from '../objects/digestSchema.js'
import { RUN_STATUSES, STEP_TYPES } from '../objects/Run.js'
import { DIVERGENCE_STATUSES } from '../trace/diff/diffRuns.js'
import { EFFECT_CLASSES, EFFECT_STATUSES } from '../objects/Ledger.js'

/** A snapshot argument, as operations take it. */
export const snapshotId = z.string().min(1).describe('a snapshot id, short id, head or tag, optionally followed by ~N or ^ (HEAD~1, main^)')

/** A branch name argument. */
export const branchName = z.string().min(1).describe('a branch name (PARENT/NAME for a branch of a branch)')

/** Whether to snapshot the versions a conflict kept beside a file. */
export const keepLeftovers = z.boolean().optional().describe('snapshot the versions kept beside conflicts (NAME~LABEL) that are still there, instead of refusing')

const userRule = (what: string) => z.array(z.string()).optional().describe(`also redact ${what} (repeatable)`)

/** The user's redaction rules, added to the built-in ones wherever calls are recorded. */
export const redactionRuleFields = {
  redactKey: userRule('this object key / header as a secret'),
  redactPath: userRule('this JSON path, e.g. $.messages[*].content, $.headers.x-trace, $..password'),
  redactPattern: userRule('every match of this regex'),
}

/** An object id as results carry it. */
export const digest = DigestSchema

/** A JSON value as a run records it: a step's input and output are whatever the agent's calls carried. */
export const jsonValue = z.json()

/** Which child of which image `fork` made (a snapshot's `meta.fork`). */
export const forkOrigin = z.object({ of: digest, index: z.number() })

/** What a path of a tree is. */
export const entryType = z.enum(['file', 'dir', 'symlink'])

/** One side of a change: what the path was (or became). */
const entryInfo = z.object({ type: entryType, mode: z.number(), size: z.number(), target: z.string().optional().describe('the link target, for a symlink') })

/** One changed path between two trees; `old` absent for an added path, `new` for a deleted one. */
export const change = z.object({
  path: z.string(),
  status: z.enum(['added', 'deleted', 'modified', 'mode', 'typechange']),
  old: entryInfo.optional(),
  new: entryInfo.optional(),
})

/** A diff of two snapshots' files, counted by kind of change. */
export const snapshotDiff = z.object({
  a: digest,
  b: digest.nullable().describe('null: the workspace as it is now'),
  changes: z.array(change),
  summary: z.object({ added: z.number(), deleted: z.number(), modified: z.number(), mode: z.number(), typechange: z.number() }),
})

/** An entry of an effects ledger: one recorded call of a tool, linked to the previous entry by `prev`. */
export const ledgerEntry = z.object({
  seq: z.number(),
  prev: z.string().describe('the chain hash of the previous entry'),
  at: z.string(),
  tool: z.string(),
  argsHash: digest,
  idempotencyKey: z.string(),
  class: z.enum(EFFECT_CLASSES),
  status: z.enum(EFFECT_STATUSES),
  resultHash: digest.nullable().describe('null unless executed'),
})

/** What a branch commit did: the paths it changed in the parent, and the deferred effects it sent or handed up. */
export const branchCommit = z.object({
  name: z.string(),
  written: z.array(z.string()).describe('paths written into the parent (created, modified or replaced)'),
  deleted: z.array(z.string()).describe('paths removed from the parent'),
  alreadyThere: z.array(z.string()).describe('changed paths the parent already had in the same state'),
  merged: z.array(z.string()).describe('of written: files the parent had changed too, merged line by line'),
  heldBack: z.array(z.string()).describe('what the branch wrote that git would run (.git/config, hooks, .git files), not applied (trustGit applies it)'),
  durationMs: z.number(),
  effects: z.object({
    executed: z.array(ledgerEntry).describe('deferred effects run now, or found already run by a sibling'),
    handedUp: z.array(ledgerEntry).describe('deferred effects passed to a parent branch, to run when it commits'),
    sent: z.array(ledgerEntry).describe('the requests this commit sent'),
    resent: z.array(ledgerEntry).describe('of sent: those whose earlier attempt has no recorded answer (a crash)'),
  }),
})

/** An effects ledger as listed: whose it is, the ledger object, its entries (verified). */
export const effectsListing = z.object({
  source: z.string().describe('what was listed: workspace, branch NAME, image ID or ledger ID'),
  ledger: digest.nullable().describe('the ledger object, or null when there is none yet'),
  entries: z.array(ledgerEntry),
})

/** One directory of an image's file tree, at most `limit` of its `total` entries. */
export const treeListing = z.object({
  id: digest,
  path: z.string().describe("the directory, '' for the root"),
  total: z.number(),
  entries: z.array(z.object({ name: z.string(), type: entryType, mode: z.number(), size: z.number(), target: z.string().optional() })),
})

/** A live branch as its maker and the branch listing describe it. */
export const branchInfo = z.object({
  name: z.string(),
  path: z.string(),
  parent: z.string().nullable(),
  backend: z.enum(['overlay', 'reflink', 'copy']),
  persistent: z.boolean(),
  view: z.enum(['host', 'namespace']).describe("host: path is a directory every tool can use; namespace: reachable only inside the branch's namespace"),
  createdAt: z.string(),
})

/** A recorded run as the run index lists it. */
export const runSummary = z.object({
  runId: z.string(),
  digest: digest.nullable(),
  entrypoint: z.string(),
  status: z.enum(RUN_STATUSES),
  startedAt: z.string(),
  endedAt: z.string(),
  steps: z.number(),
  llmCalls: z.number(),
  toolCalls: z.number(),
  errors: z.number(),
  parent: z.string().nullable(),
  redaction: z.string(),
})

const stepSummary = z.object({
  idx: z.number(),
  name: z.string(),
  type: z.enum(STEP_TYPES),
  inputHash: z.string(),
  outputHash: z.string(),
  error: z.boolean(),
})

/** One difference between two JSON values, at a path like `$.messages[1].content`. */
const diffOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('remove'), path: z.string(), value: jsonValue }),
  z.object({ op: z.literal('add'), path: z.string(), value: jsonValue }),
  z.object({ op: z.literal('replace'), path: z.string(), old: jsonValue, new: jsonValue }),
])

/** Where run B first diverges from run A (step indexes in each run). */
export const runDiff = z.object({
  status: z.enum(DIVERGENCE_STATUSES),
  idxA: z.number().nullable(),
  idxB: z.number().nullable(),
  lastEqualIdx: z.number().nullable(),
  explanation: z.string(),
  inputDiff: z.array(diffOp).nullable(),
  outputDiff: z.array(diffOp).nullable(),
  contextA: z.array(stepSummary),
  contextB: z.array(stepSummary),
  resync: z.object({ idxA: z.number(), idxB: z.number() }).nullable(),
  runA: z.string(),
  runB: z.string(),
})

/** A step's failure as recorded: the error, or the sealed string of an encrypted run. */
export const stepError = z.union([z.object({ name: z.string(), message: z.string(), code: z.string().optional() }), z.string()])

/** The kinds of step a run records. */
export const stepType = z.enum(STEP_TYPES)

/** What a scan of the workspace found and how much of it had to be read (fields of a result). */
export const scanCounts = {
  files: z.number(),
  bytes: z.number(),
  hashedFiles: z.number().describe('files whose content had to be read (not vouched for by the index)'),
  hashedBytes: z.number(),
  listedDirs: z.number().describe('directories whose entries had to be listed (not vouched for by the index)'),
  skipped: z.array(z.string()).describe('paths that are not files, directories or symlinks (sockets, fifos, devices)'),
}
