import { z } from 'zod'
import { REDACTION_MODES, RUN_STATUSES } from '../../objects/Run.js'
import type { RunSummary } from '../../trace/core/RunStore.js'
import { printable } from '../../trace/core/printable.js'
import { counted } from '../../util/plural.js'
import { defineOperation } from '../operation.js'
import { fileRule } from '../requestPolicy.js'
import { jsonValue, runSummary, stepError, stepType } from '../schemas.js'
import { pc } from '../text/colors.js'
import { listLines } from '../text/format.js'

const runSpec = z.string().min(1).describe('a run id, unique prefix, latest, or a *.run.json file')

/** A recorded step; loose as the type is: fields of newer recorders are kept as they are. */
const step = z
  .object({
    idx: z.number(),
    name: z.string(),
    type: stepType,
    input: jsonValue,
    output: jsonValue,
    error: stepError.optional(),
    inputHash: z.string(),
    outputHash: z.string(),
    startedAt: z.string(),
    durationMs: z.number(),
    meta: z.record(z.string(), jsonValue).optional(),
  })
  .loose()

/** A recorded run as stored and exported (`*.run.json`); loose as the type is. */
const recordedRun = z
  .object({
    kind: z.literal('run'),
    schemaVersion: z.number(),
    runId: z.string(),
    entrypoint: z.string(),
    startedAt: z.string(),
    endedAt: z.string(),
    status: z.enum(RUN_STATUSES),
    steps: z.array(step),
    redaction: z.enum(REDACTION_MODES),
    encryption: z.object({ alg: z.literal('aes-256-gcm'), kdf: z.enum(['raw', 'scrypt']), keyCheck: z.string() }).optional(),
    parent: z.string().optional(),
    meta: z.record(z.string(), jsonValue),
  })
  .loose()

export const runs = defineOperation({
  name: 'runs',
  description: 'The recorded runs, newest first.',
  input: {
    limit: z.number().int().min(1).optional().describe('at most this many (default 20)'),
    entrypoint: z.string().optional().describe('only runs of this entrypoint'),
    status: z.enum(RUN_STATUSES).optional().describe('only runs that ended so'),
    step: z.string().optional().describe('only runs with a step whose name contains this'),
  },
  output: z.object({ runs: z.array(runSummary) }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { usage: 'runs', short: { limit: 'n' }, rendering: { human: (r) => listLines(r.runs, runLine, 'no recorded runs') } },
  async run(where, { limit, ...filter }) {
    const { listRuns } = await import('../../trace/core/listRuns.js')
    return { runs: await listRuns({ ...where, ...filter, limit: limit ?? 20 }) }
  },
})

export const runsShow = defineOperation({
  name: 'runs_show',
  description: 'A recorded run: its header and every step.',
  input: { run: runSpec },
  output: z.object({ run: recordedRun }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { usage: 'runs show <run>', rendering: { human: (r) => renderRun(r.run) } },
  async run(where, { run }, { policy }) {
    const { loadRun } = await import('../../trace/core/loadRun.js')
    return { run: await loadRun({ ...where, spec: run, confine: fileRule(policy) }) }
  },
})

export const runsRm = defineOperation({
  name: 'runs_rm',
  description: "Forget recorded runs; 'forkpoint gc' reclaims their space once their reflog entries expire (--prune=now: at once).",
  input: { runs: z.array(z.string().min(1)).min(1).describe('run ids, unique prefixes or latest') },
  output: z.object({ removed: z.array(z.string()).describe('the run ids forgotten') }),
  annotations: { readOnly: false, destructive: true, idempotent: false },
  cli: { usage: 'runs rm <runs...>', rendering: { human: (r) => r.removed.map((id) => `removed ${id}`).join('\n') } },
  async run(where, { runs }) {
    const { removeRuns } = await import('../../trace/core/removeRuns.js')
    return { removed: await removeRuns({ ...where, specs: runs }) }
  },
})

export const runsExport = defineOperation({
  name: 'runs_export',
  description: 'Write a recorded run as a portable *.run.json artifact.',
  input: { run: runSpec, out: z.string().min(1).describe('the artifact to write') },
  output: z.object({ artifact: z.string(), runId: z.string(), steps: z.number() }),
  annotations: { readOnly: false, destructive: true, idempotent: true },
  surfaces: { only: ['cli'], why: 'it writes a file where the caller says; runs_show gives a remote caller the run itself' },
  cli: { usage: 'runs export <run>', short: { out: 'o' }, rendering: { human: (r) => `wrote ${r.runId} (${counted(r.steps, 'step')}) to ${r.artifact}` } },
  async run(where, { run, out }) {
    const { exportRun } = await import('../../trace/core/exportRun.js')
    return exportRun({ ...where, spec: run, out })
  },
})

function runLine(r: RunSummary): string {
  r = { ...r, runId: printable(r.runId), entrypoint: printable(r.entrypoint), parent: r.parent && printable(r.parent) }
  const status = r.status === 'ok' ? pc.green(r.status) : pc.red(r.status)
  return `${pc.yellow(r.runId)} ${status} ${r.entrypoint} ${counted(r.steps, 'step')} (${r.llmCalls} llm, ${r.toolCalls} tool${r.errors ? `, ${counted(r.errors, 'error')}` : ''}) ${pc.dim(r.startedAt)}${r.parent ? pc.dim(` from ${r.parent}`) : ''}`
}

function renderRun(run: z.infer<typeof recordedRun>): string {
  const head = `${pc.yellow(printable(run.runId))} ${printable(run.entrypoint)} ${run.status} ${run.startedAt} .. ${run.endedAt} redaction=${printable(run.redaction)}${run.parent ? ` parent=${printable(run.parent)}` : ''}`
  const steps = run.steps.map(
    (s) =>
      `  ${String(s.idx).padStart(4)} ${s.type.padEnd(6)} ${printable(s.name)}${s.error !== undefined ? pc.red(' error') : ''} ${pc.dim(`${s.durationMs.toFixed(1)}ms in:${s.inputHash.slice(0, 12)} out:${s.outputHash.slice(0, 12)}`)}`,
  )
  return [head, ...steps].join('\n')
}
