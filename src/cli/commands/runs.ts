import type { Command } from 'commander'
import type { Run, RunSummary } from '../../index.js'
import { printable } from '../../trace/printable.js'
import { common, commonFlags } from '../context.js'
import { emit, pc } from '../output.js'

export function registerRuns(program: Command): void {
  const runs = common(program.command('runs'))
    .description('recorded runs, newest first')
    .option('-n, --limit <n>', 'at most this many', (v) => Number.parseInt(v, 10), 20)
    .option('--entrypoint <name>', 'only runs of this entrypoint')
    .option('--status <status>', 'only ok / failed runs')
    .option('--step <text>', 'only runs with a step whose name contains this')
    .action(async (opts: { limit: number; entrypoint?: string; status?: 'ok' | 'failed'; step?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { listRuns } = await import('../../trace/listRuns.js')
      const list = await listRuns({ ...opts, dir: flags.dir, store: flags.store })
      emit(flags, { runs: list }, (r) => (r.runs.length ? r.runs.map(line).join('\n') : 'no recorded runs'))
    })
  common(runs.command('show <run>'))
    .description('a run: its header and every step')
    .action(async (spec: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { loadRun } = await import('../../trace/loadRun.js')
      const run = await loadRun({ spec, dir: flags.dir, store: flags.store })
      emit(flags, { run }, (r) => render(r.run))
    })
  common(runs.command('rm <run...>'))
    .description("forget recorded runs; 'forkpoint gc' reclaims their space once their reflog entries expire (--prune=now: at once)")
    .action(async (specs: string[], _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { removeRuns } = await import('../../trace/removeRuns.js')
      const removed = await removeRuns({ specs, dir: flags.dir, store: flags.store })
      emit(flags, { removed }, (r) => r.removed.map((id) => `removed ${id}`).join('\n'))
    })
  common(runs.command('export <run>'))
    .description('write a run as a portable *.run.json artifact')
    .requiredOption('-o, --out <file>', 'the artifact to write')
    .action(async (spec: string, opts: { out: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { exportRun } = await import('../../trace/exportRun.js')
      const result = await exportRun({ spec, out: opts.out, dir: flags.dir, store: flags.store })
      emit(flags, result, (r) => `wrote ${r.runId} (${r.steps} steps) to ${r.artifact}`)
    })
}

function line(r: RunSummary): string {
  r = { ...r, runId: printable(r.runId), entrypoint: printable(r.entrypoint), parent: r.parent && printable(r.parent) }
  const status = r.status === 'ok' ? pc.green(r.status) : pc.red(r.status)
  return `${pc.yellow(r.runId)} ${status} ${r.entrypoint} ${r.steps} steps (${r.llmCalls} llm, ${r.toolCalls} tool${r.errors ? `, ${r.errors} errors` : ''}) ${pc.dim(r.startedAt)}${r.parent ? pc.dim(` from ${r.parent}`) : ''}`
}

function render(run: Run): string {
  const head = `${pc.yellow(printable(run.runId))} ${printable(run.entrypoint)} ${run.status} ${run.startedAt} .. ${run.endedAt} redaction=${printable(run.redaction)}${run.parent ? ` parent=${printable(run.parent)}` : ''}`
  const steps = run.steps.map((s) => `  ${String(s.idx).padStart(4)} ${s.type.padEnd(6)} ${printable(s.name)}${s.error !== undefined ? pc.red(' error') : ''} ${pc.dim(`${s.durationMs.toFixed(1)}ms in:${s.inputHash.slice(0, 12)} out:${s.outputHash.slice(0, 12)}`)}`)
  return [head, ...steps].join('\n')
}
