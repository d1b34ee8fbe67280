import type { Command } from 'commander'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'

export interface DemoResult {
  ok: true
  steps: string[]
  seconds: number
  /** the demo directory, when kept */
  kept: string | null
}

/** `forkpoint demo`: the end-to-end demo in a temporary directory; `out` hears its narration as it goes (default: stdout). */
export async function demoCommand({ keep, out }: { keep?: boolean; out?: (text: string) => void }): Promise<DemoResult> {
  const { makeDemoContext } = await import('../demo/DemoContext.js')
  const { demoSteps } = await import('../demo/steps.js')
  const root = await mkdtemp(join(tmpdir(), 'forkpoint-demo-'))
  const ctx = makeDemoContext(root, out)
  const started = Date.now()
  try {
    for (const step of demoSteps) await step.run(ctx)
  } finally {
    if (!keep) await rm(root, { recursive: true, force: true })
  }
  return { ok: true, steps: demoSteps.map((s) => s.name), seconds: (Date.now() - started) / 1000, kept: keep ? root : null }
}

export const demoView: Rendering<DemoResult> = { human: (r) => `\ndemo finished in ${r.seconds.toFixed(1)}s${r.kept ? ` (kept in ${r.kept})` : ''}` }

export function registerDemo(program: Command): void {
  common(program.command('demo'))
    .description('run the end-to-end demo in a temporary directory (no servers needed)')
    .option('--keep', 'keep the demo directory afterwards')
    .action(async (opts: { keep?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      // the narration is the human output; under --json it goes to stderr, so stdout parses
      print(flags, await demoCommand({ ...opts, ...(flags.json ? { out: (s: string) => process.stderr.write(s) } : {}) }), demoView)
    })
}
