import type { RunDiff, StepSummary } from './diffRuns.js'
import type { DiffOp } from './jsonDiff.js'
import { printable } from '../core/printable.js'

const MAX_VALUE = 120

/** The human report of a run diff: status, explanation, the steps around it side by side, and what changed. */
export function renderRunDiff(diff: RunDiff): string {
  const lines = [`${diff.status === 'exact_match' ? 'identical' : 'diverged'}: ${diff.status}`, `  A ${diff.runA}`, `  B ${diff.runB}`, '', diff.explanation]
  if (diff.status !== 'exact_match') {
    lines.push('', 'context:')
    lines.push(...column('A', diff.contextA, diff.idxA), ...column('B', diff.contextB, diff.idxB))
  }
  for (const [title, ops] of [
    ['input changes', diff.inputDiff],
    ['output changes', diff.outputDiff],
  ] as const) {
    if (ops && ops.length > 0) lines.push('', `${title}:`, ...ops.slice(0, 20).map(renderOp), ...(ops.length > 20 ? [`  … ${ops.length - 20} more`] : []))
  }
  if (diff.resync) lines.push('', `runs line up again at A step ${diff.resync.idxA} / B step ${diff.resync.idxB}`)
  // names, ids and paths come from the runs: escaped, so an artifact cannot drive the terminal
  return lines.map(printable).join('\n')
}

function column(label: string, steps: StepSummary[], at: number | null): string[] {
  return steps.map(
    (s) => `  ${s.idx === at ? '>' : ' '} ${label} ${String(s.idx).padStart(5)}  ${s.type.padEnd(6)} ${s.name}${s.error ? '  (error)' : ''}  in:${s.inputHash} out:${s.outputHash}`,
  )
}

function renderOp(op: DiffOp): string {
  if (op.op === 'replace') return `  ~ ${op.path}: ${show(op.old)} -> ${show(op.new)}`
  return `  ${op.op === 'add' ? '+' : '-'} ${op.path}: ${show(op.value)}`
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined'
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text
}
