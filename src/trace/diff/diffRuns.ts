import { hashableText } from '../core/stepHash.js'
import { type DiffOp, jsonDiff } from './jsonDiff.js'
import type { PayloadCipher } from '../redact/payloadCipher.js'
import { isSealed, type JsonValue, type Run, type Step, type StepType } from '../../objects/Run.js'
import { counted } from '../../util/plural.js'

export const DIVERGENCE_STATUSES = ['exact_match', 'input_divergence', 'output_divergence', 'op_divergence', 'missing_steps', 'extra_steps', 'error_divergence'] as const
export type DivergenceStatus = (typeof DIVERGENCE_STATUSES)[number]

/** A step as shown around a divergence. */
export interface StepSummary {
  idx: number
  name: string
  type: StepType
  inputHash: string
  outputHash: string
  error: boolean
}

/** The first divergence of run B from run A. Indexes are step indexes in each run. */
export interface RunDiff {
  status: DivergenceStatus
  idxA: number | null
  idxB: number | null
  /** Index in A of the last step that matched before the divergence. */
  lastEqualIdx: number | null
  explanation: string
  inputDiff: DiffOp[] | null
  outputDiff: DiffOp[] | null
  contextA: StepSummary[]
  contextB: StepSummary[]
  /** Where the runs line up again after the divergence (within the window), if they do. */
  resync: { idxA: number; idxB: number } | null
  runA: string
  runB: string
}

export interface DiffRunsArgs {
  a: Run
  b: Run
  /** How far to look ahead for the nearest matching step, to tell inserted or deleted steps from changed ones. */
  window?: number
  /** Steps of context on each side. */
  context?: number
  /** Opens encrypted payloads, to show what changed; without it encrypted runs compare by hash only. */
  cipher?: PayloadCipher | null
}

const errorKey = (s: Step) => (s.error === undefined ? '' : isSealed(s.error) ? 'sealed' : hashableText(s.error))

/**
 * Payloads are compared by content, not by the hashes an artifact carries (a hand-edited
 * artifact diffs by what it says): identical JSON text first (fast), else the canonical
 * NFC form. Sealed payloads compare by their keyed hash.
 */
function samePayload(x: Step, y: Step, field: 'input' | 'output'): boolean {
  const a = x[field]
  const b = y[field]
  if (isSealed(a) || isSealed(b)) return x[`${field}Hash`] === y[`${field}Hash`]
  return JSON.stringify(a) === JSON.stringify(b) || hashableText(a) === hashableText(b)
}

const sameSignature = (x: Step, y: Step) => x.name === y.name && samePayload(x, y, 'input')
const sameStep = (x: Step, y: Step) => sameSignature(x, y) && samePayload(x, y, 'output') && errorKey(x) === errorKey(y)

/**
 * Find where run B first diverges from run A. Steps match by signature (name + input
 * payload), output and error state. At the first mismatch a window of following
 * steps is searched for the nearest step with the same signature, which tells steps
 * inserted in B (`extra_steps`) or missing from B (`missing_steps`) apart from a
 * changed step. One linear pass: 100,000-step runs diff in well under a second.
 */
export function diffRuns({ a, b, window = 10, context = 3, cipher = null }: DiffRunsArgs): RunDiff {
  const A = a.steps
  const B = b.steps
  let i = 0
  let j = 0
  while (i < A.length && j < B.length && sameStep(A[i]!, B[j]!)) {
    i++
    j++
  }
  const base = { runA: a.runId, runB: b.runId, lastEqualIdx: i > 0 ? i - 1 : null, contextA: around(A, i, context), contextB: around(B, j, context) }
  const open = (s: Step, field: 'input' | 'output'): JsonValue => (isSealed(s[field]) ? (cipher ? cipher.open(s[field], field) : null) : s[field])
  const describe = (s: Step) => `${s.type} "${s.name}"`
  const found = (
    status: DivergenceStatus,
    idxA: number | null,
    idxB: number | null,
    explanation: string,
    diffs: Partial<Pick<RunDiff, 'inputDiff' | 'outputDiff' | 'resync'>> = {},
  ): RunDiff => ({
    ...base,
    status,
    idxA,
    idxB,
    explanation,
    inputDiff: null,
    outputDiff: null,
    resync: null,
    ...diffs,
  })
  if (i === A.length && j === B.length) {
    return found('exact_match', null, null, `the runs match: ${counted(A.length, 'step')}, same calls, inputs, outputs and errors`)
  }
  if (j === B.length) {
    return found('missing_steps', i, null, `run B ends after ${counted(B.length, 'step')}; A continues with ${A.length - i} more, from step ${i} ${describe(A[i]!)}`)
  }
  if (i === A.length) {
    return found('extra_steps', null, j, `run B has ${counted(B.length - j, 'step')} more than A at its end, from step ${j} ${describe(B[j]!)}`)
  }
  const sa = A[i]!
  const sb = B[j]!
  if (sameSignature(sa, sb)) {
    const resync = { idxA: i + 1, idxB: j + 1 }
    if (errorKey(sa) !== errorKey(sb)) {
      const what = sa.error === undefined ? 'fails in B only' : sb.error === undefined ? 'fails in A only' : 'fails differently'
      const both = (s: Step) => ({ output: open(s, 'output'), error: (isSealed(s.error) ? null : (s.error ?? null)) as JsonValue })
      return found('error_divergence', i, j, `step ${i} ${describe(sa)}: same call, ${what}`, { outputDiff: jsonDiff(both(sa), both(sb)), resync })
    }
    const outputDiff = plainOrNull(sa, sb, 'output', open)
    return found('output_divergence', i, j, `step ${i} ${describe(sa)}: same input, different output${summarise(outputDiff)}`, { outputDiff, resync })
  }
  const inserted = lookAhead(B, j, window, sa)
  const deleted = lookAhead(A, i, window, sb)
  if (inserted !== null && (deleted === null || inserted <= deleted)) {
    return found('extra_steps', i, j, `run B inserts ${inserted} step(s) before A's step ${i} ${describe(sa)}, starting with ${describe(sb)}`, {
      resync: { idxA: i, idxB: j + inserted },
    })
  }
  if (deleted !== null) {
    return found('missing_steps', i, j, `run B skips ${deleted} step(s) of A from step ${i} ${describe(sa)}; both continue with ${describe(sb)}`, {
      resync: { idxA: i + deleted, idxB: j },
    })
  }
  const resync = i + 1 < A.length && j + 1 < B.length && sameSignature(A[i + 1]!, B[j + 1]!) ? { idxA: i + 1, idxB: j + 1 } : null
  if (sa.name === sb.name) {
    const inputDiff = plainOrNull(sa, sb, 'input', open)
    return found('input_divergence', i, j, `step ${i} ${describe(sa)}: same step, different input${summarise(inputDiff)}`, { inputDiff, resync })
  }
  return found('op_divergence', i, j, `step ${i}: A calls ${describe(sa)} where B calls ${describe(sb)}`, { resync })
}

function plainOrNull(sa: Step, sb: Step, field: 'input' | 'output', open: (s: Step, f: 'input' | 'output') => JsonValue): DiffOp[] | null {
  if ((isSealed(sa[field]) || isSealed(sb[field])) && open(sa, field) === null && open(sb, field) === null) return null
  return jsonDiff(open(sa, field), open(sb, field))
}

function summarise(ops: DiffOp[] | null): string {
  if (ops === null) return ' (encrypted: set FORKPOINT_KEY to see what changed)'
  if (ops.length === 0) return ''
  const first = ops
    .slice(0, 3)
    .map((o) => o.path)
    .join(', ')
  return ` (${counted(ops.length, 'change')}: ${first}${ops.length > 3 ? ', …' : ''})`
}

/** The smallest k in 1..window with `steps[from + k]` having the signature of `target`, or null. */
function lookAhead(steps: Step[], from: number, window: number, target: Step): number | null {
  for (let k = 1; k <= window && from + k < steps.length; k++) if (sameSignature(steps[from + k]!, target)) return k
  return null
}

function around(steps: Step[], at: number, n: number): StepSummary[] {
  return steps.slice(Math.max(0, at - n), Math.min(steps.length, at + n)).map((s) => ({
    idx: s.idx,
    name: s.name,
    type: s.type,
    inputHash: s.inputHash.slice(0, 12),
    outputHash: s.outputHash.slice(0, 12),
    error: s.error !== undefined,
  }))
}
