import { z } from 'zod'
import { UsageError } from '../../errors/index.js'
import { pc } from '../text/colors.js'
import { defineOperation } from '../operation.js'
import { digest, snapshotId } from '../schemas.js'
import { drawGraph } from '../text/drawGraph.js'
import { short } from '../text/format.js'

const logEntry = z.object({
  id: digest,
  parents: z.array(digest),
  tree: digest,
  message: z.string(),
  agent: z.string().optional(),
  createdAt: z.string(),
  refs: z.array(z.string()),
})
type LogEntry = z.infer<typeof logEntry>

export const log = defineOperation({
  name: 'log',
  description: 'The history from a snapshot (default HEAD), newest first.',
  input: {
    ref: snapshotId.optional(),
    all: z.boolean().optional().describe('from HEAD and every ref that names a snapshot (heads, tags, forks, sessions, threads), not only ref or HEAD'),
    limit: z.number().int().min(1).optional().describe('at most this many (default: all on the command line, 50 elsewhere)'),
    graph: z.boolean().optional().describe('draw the parent graph'),
  },
  local: { fields: ['graph'], why: 'how the command line draws the result' },
  output: z.object({ entries: z.array(logEntry) }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: {
    usage: 'log [ref]',
    short: { limit: 'n' },
    rendering: { human: (r, { graph }) => (r.entries.length === 0 ? 'no snapshots yet' : graph ? drawGraph(r.entries, line) : r.entries.map(line).join('\n')) },
  },
  async run(where, { ref, all, limit }, { policy }) {
    if (all && ref !== undefined) throw new UsageError('log: --all or a REF, not both', { option: '--all' })
    const { log } = await import('../../world/workspace/log.js')
    return { entries: await log({ ...where, from: ref ?? 'HEAD', all: all ?? false, limit: limit ?? (policy ? 50 : Infinity) }) }
  },
})

function line(e: LogEntry): string {
  const refs = e.refs.length ? ` ${pc.yellow(`(${e.refs.join(', ')})`)}` : ''
  return `${pc.yellow(short(e.id))}${refs} ${e.message} ${pc.dim(`${e.createdAt}${e.agent ? ` by ${e.agent}` : ''}`)}`
}
