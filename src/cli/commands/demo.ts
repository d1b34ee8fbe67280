import type { Command } from 'commander'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerDemo(program: Command): void {
  common(program.command('demo'))
    .description('run the end-to-end demo in a temporary directory (no servers needed)')
    .option('--keep', 'keep the demo directory afterwards')
    .action(async (opts: { keep?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { makeDemoContext } = await import('../demo/DemoContext.js')
      const { demoSteps } = await import('../demo/steps.js')
      const root = await mkdtemp(join(tmpdir(), 'forkpoint-demo-'))
      const ctx = makeDemoContext(root, flags.json ? (s) => process.stderr.write(s) : undefined)
      const started = Date.now()
      try {
        for (const step of demoSteps) await step.run(ctx)
      } finally {
        if (!opts.keep) await rm(root, { recursive: true, force: true })
      }
      emit(flags, { ok: true, steps: demoSteps.map((s) => s.name), seconds: (Date.now() - started) / 1000, kept: opts.keep ? root : null }, (r) =>
        `\ndemo finished in ${r.seconds.toFixed(1)}s${r.kept ? ` (kept in ${r.kept})` : ''}`,
      )
    })
}
