import type { CommandValue } from '../../patterns/runCandidate.js'
import type { CandidateStatus, Outcome } from '../../patterns/types.js'
import type { Rendering } from '../rendering.js'
import { pc } from './colors.js'

// colour names, looked up in the colours of the call: the edge turns them on after this module loads
const COLOUR: Record<CandidateStatus, 'green' | 'yellow' | 'red' | 'dim'> = { succeeded: 'green', failed: 'yellow', error: 'red', timeout: 'red', cancelled: 'dim' }

/** The candidates as a table (index, status, score, time, what changed or went wrong), then the winner. */
export function formatOutcome(outcome: Outcome<CommandValue>): string {
  const rows = outcome.results.map((r) => [
    `${r.index === outcome.winner ? '*' : ' '}${r.index}`,
    r.status,
    r.score === null ? '-' : String(r.score),
    `${(r.durationMs / 1000).toFixed(2)}s`,
    r.error ?? (r.value ? `exit ${r.value.exitCode}, ${r.value.changedPaths.length} path(s) changed` : ''),
  ])
  const header = ['#', 'status', 'score', 'time', 'detail']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: string[], colour = (_: string) => _) =>
    cells
      .map((c, i) => (i === 1 ? colour(c.padEnd(widths[i]!)) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  const table = [pc.bold(line(header)), ...rows.map((row, i) => line(row, pc[COLOUR[outcome.results[i]!.status]]))].join('\n')
  return `${table}\n${verdict(outcome)}`
}

function verdict(outcome: Outcome<CommandValue>): string {
  if (!outcome.committed || outcome.winner === undefined) return pc.yellow('no candidate succeeded: nothing committed')
  const c = outcome.commit
  return pc.green(`winner: #${outcome.winner}, committed${c ? ` (${c.written.length} written, ${c.deleted.length} deleted)` : ''}`)
}

/** speculate and explore: the table, the outcome's warnings, and exit 1 when no candidate was committed. */
export const outcomeRendering: Rendering<Outcome<CommandValue>> = {
  human: formatOutcome,
  warnings: (o) => (o.warnings ?? []).map((w) => `forkpoint: warning: ${w}`),
  exit: (o) => (o.committed ? 0 : 1),
}
