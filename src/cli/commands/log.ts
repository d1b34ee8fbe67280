import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import type { LogEntry } from '../../world/workspace/log.js'
import { type Where, common, commonFlags } from '../context.js'
import { drawGraph } from '../drawGraph.js'
import { short } from '../format.js'
import { type View, pc, print } from '../output.js'

/** `forkpoint log [REF]`: the history of snapshots, newest first. */
export async function logCommand({ ref, limit, all, ...where }: Where & { ref?: string; limit?: number; all?: boolean }): Promise<{ entries: LogEntry[] }> {
  const { log } = await import('../../world/workspace/log.js')
  return { entries: await log({ ...where, from: ref ?? 'HEAD', all: Boolean(all), limit: limit ?? Infinity }) }
}

export function logView(graph: boolean): View<{ entries: LogEntry[] }> {
  return { human: (r) => (r.entries.length === 0 ? 'no snapshots yet' : graph ? drawGraph(r.entries, line) : r.entries.map(line).join('\n')) }
}

export function registerLog(program: Command): void {
  common(program.command('log [REF]'))
    .description('history of snapshots, newest first')
    .option('--graph', 'draw the parent graph')
    .option('--all', 'from HEAD and every ref that names a snapshot (heads, tags, forks, sessions, threads), not only REF or HEAD')
    .option('-n, --limit <n>', 'at most this many', (v) => Number.parseInt(v, 10))
    .action(async (ref: string | undefined, opts: { graph?: boolean; limit?: number; all?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      if (opts.all && ref !== undefined) throw new UsageError('log: --all or a REF, not both', { option: '--all' })
      print(flags, await logCommand({ dir: flags.dir, store: flags.store, ref, limit: opts.limit, all: Boolean(opts.all) }), logView(Boolean(opts.graph)))
    })
}

function line(e: LogEntry): string {
  const refs = e.refs.length ? ` ${pc.yellow(`(${e.refs.join(', ')})`)}` : ''
  return `${pc.yellow(short(e.id))}${refs} ${e.message} ${pc.dim(`${e.createdAt}${e.agent ? ` by ${e.agent}` : ''}`)}`
}
