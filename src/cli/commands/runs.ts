import type { Command } from 'commander'
import { listLines } from '../../operations/text/format.js'
import type { Run, RunSummary } from '../../index.js'
import type { ListRunsArgs } from '../../trace/core/RunStore.js'
import { printable } from '../../trace/core/printable.js'
import { type Where, common, commonFlags } from '../context.js'
import { pc, print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { counted } from '../../util/plural.js'

/** `forkpoint runs`: recorded runs, newest first. */
export async function runsCommand({ dir, store, ...filter }: Where & ListRunsArgs): Promise<{ runs: RunSummary[] }> {
  const { listRuns } = await import('../../trace/core/listRuns.js')
  return { runs: await listRuns({ ...filter, dir, store }) }
}

/** `forkpoint runs show RUN`: a run, its header and every step. */
export async function runsShowCommand({ dir, store, spec }: Where & { spec: string }): Promise<{ run: Run }> {
  const { loadRun } = await import('../../trace/core/loadRun.js')
  return { run: await loadRun({ spec, dir, store }) }
}

/** `forkpoint runs rm RUN...`: recorded runs forgotten. */
export async function runsRmCommand({ dir, store, specs }: Where & { specs: string[] }): Promise<{ removed: string[] }> {
  const { removeRuns } = await import('../../trace/core/removeRuns.js')
  return { removed: await removeRuns({ specs, dir, store }) }
}

/** `forkpoint runs export RUN -o FILE`: a run written as a portable *.run.json artifact. */
export async function runsExportCommand({ dir, store, spec, out }: Where & { spec: string; out: string }): Promise<{ artifact: string; runId: string; steps: number }> {
  const { exportRun } = await import('../../trace/core/exportRun.js')
  return exportRun({ spec, out, dir, store })
}

export const runsView: Rendering<{ runs: RunSummary[] }> = { human: (r) => listLines(r.runs, line, 'no recorded runs') }
export const runsShowView: Rendering<{ run: Run }> = { human: (r) => render(r.run) }
export const runsRmView: Rendering<{ removed: string[] }> = { human: (r) => r.removed.map((id) => `removed ${id}`).join('\n') }
export const runsExportView: Rendering<{ artifact: string; runId: string; steps: number }> = { human: (r) => `wrote ${r.runId} (${counted(r.steps, 'step')}) to ${r.artifact}` }

export function registerRuns(program: Command): void {
  const runs = common(program.command('runs'))
    .description('recorded runs, newest first')
    .option('-n, --limit <n>', 'at most this many', (v) => Number.parseInt(v, 10), 20)
    .option('--entrypoint <name>', 'only runs of this entrypoint')
    .option('--status <status>', 'only ok / failed runs')
    .option('--step <text>', 'only runs with a step whose name contains this')
    .action(async (opts: { limit: number; entrypoint?: string; status?: 'ok' | 'failed'; step?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await runsCommand({ dir: flags.dir, store: flags.store, ...opts }), runsView)
    })
  common(runs.command('show <run>'))
    .description('a run: its header and every step')
    .action(async (spec: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await runsShowCommand({ dir: flags.dir, store: flags.store, spec }), runsShowView)
    })
  common(runs.command('rm <run...>'))
    .description("forget recorded runs; 'forkpoint gc' reclaims their space once their reflog entries expire (--prune=now: at once)")
    .action(async (specs: string[], _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await runsRmCommand({ dir: flags.dir, store: flags.store, specs }), runsRmView)
    })
  common(runs.command('export <run>'))
    .description('write a run as a portable *.run.json artifact')
    .requiredOption('-o, --out <file>', 'the artifact to write')
    .action(async (spec: string, opts: { out: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await runsExportCommand({ dir: flags.dir, store: flags.store, spec, out: opts.out }), runsExportView)
    })
}

function line(r: RunSummary): string {
  r = { ...r, runId: printable(r.runId), entrypoint: printable(r.entrypoint), parent: r.parent && printable(r.parent) }
  const status = r.status === 'ok' ? pc.green(r.status) : pc.red(r.status)
  return `${pc.yellow(r.runId)} ${status} ${r.entrypoint} ${counted(r.steps, 'step')} (${r.llmCalls} llm, ${r.toolCalls} tool${r.errors ? `, ${counted(r.errors, 'error')}` : ''}) ${pc.dim(r.startedAt)}${r.parent ? pc.dim(` from ${r.parent}`) : ''}`
}

function render(run: Run): string {
  const head = `${pc.yellow(printable(run.runId))} ${printable(run.entrypoint)} ${run.status} ${run.startedAt} .. ${run.endedAt} redaction=${printable(run.redaction)}${run.parent ? ` parent=${printable(run.parent)}` : ''}`
  const steps = run.steps.map(
    (s) =>
      `  ${String(s.idx).padStart(4)} ${s.type.padEnd(6)} ${printable(s.name)}${s.error !== undefined ? pc.red(' error') : ''} ${pc.dim(`${s.durationMs.toFixed(1)}ms in:${s.inputHash.slice(0, 12)} out:${s.outputHash.slice(0, 12)}`)}`,
  )
  return [head, ...steps].join('\n')
}
