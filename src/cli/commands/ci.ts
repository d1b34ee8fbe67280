import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'
import { type RedactionFlags, redactionOptions, redactionRules } from '../redactionFlags.js'

const CI_EXIT = { pass: 0, diff: 1, offline_violation: 4 } as const

/** `forkpoint ci record|check|diff|normalize|replay`: each subcommand one library call. */
export function registerCi(program: Command): void {
  const ci = program.command('ci').description('gate CI on agent behaviour: record a golden run, check against it offline, diff, normalise, validate')
  redactionOptions(common(ci.command('record')))
    .description('record the entrypoint and write its normalised golden artifact')
    .requiredOption('--entrypoint <file>', 'the agent script')
    .requiredOption('--out <file>', 'the artifact to write (*.run.json)')
    .option('--proxy', 'record through the local proxy (any language)')
    .option('--deterministic', 'pin Date and Math.random')
    .action(async (opts: RedactionFlags & { entrypoint: string; out: string; proxy?: boolean; deterministic?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { ciRecord } = await import('../../trace/ciRecord.js')
      const r = await ciRecord({ entrypoint: opts.entrypoint, out: opts.out, dir: flags.dir, store: flags.store, redact: opts.redact, rules: redactionRules(opts), proxy: Boolean(opts.proxy), deterministic: Boolean(opts.deterministic), stdout: 'stderr' })
      emit(flags, { runId: r.runId, artifact: r.artifact, steps: r.steps, exitCode: r.exitCode }, (x) => `recorded ${x.runId}: ${x.steps} steps -> ${x.artifact}`)
    })
  common(ci.command('check'))
    .description('run the entrypoint (offline by default) and diff against the golden run: exit 0 same, 1 diverged, 4 offline violation')
    .requiredOption('--entrypoint <file>', 'the agent script')
    .requiredOption('--expected <artifact>', 'the golden *.run.json')
    .option('--live', 'let the agent use the network and real APIs')
    .option('--actual-out <file>', 'also write the actual run (normalised)')
    .option('--window <n>', 'resync window', (v) => Number.parseInt(v, 10), 10)
    .action(async (opts: { entrypoint: string; expected: string; live?: boolean; actualOut?: string; window: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { ciCheck } = await import('../../trace/ciCheck.js')
      const { renderRunDiff } = await import('../../trace/renderRunDiff.js')
      const r = await ciCheck({ ...opts, live: Boolean(opts.live), dir: flags.dir, store: flags.store, stdout: 'stderr' })
      emit(flags, { outcome: r.outcome, trace: r.diff, offlineViolations: r.offlineViolations, isolation: r.isolation, agentExitCode: r.exitCode, actualArtifact: r.actualArtifact }, (x) =>
        x.outcome === 'offline_violation' ? `runs match, but the agent tried to reach: ${x.offlineViolations.join(', ')}` : renderRunDiff(x.trace),
      )
      process.exitCode = CI_EXIT[r.outcome]
    })
  common(ci.command('diff'))
    .description('diff two artifacts after normalising both: exit 0 same, 1 diverged')
    .requiredOption('--expected <artifact>', 'the golden run')
    .requiredOption('--actual <artifact>', 'the run to check')
    .option('--window <n>', 'resync window', (v) => Number.parseInt(v, 10), 10)
    .action(async (opts: { expected: string; actual: string; window: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { ciDiff } = await import('../../trace/ciDiff.js')
      const { renderRunDiff } = await import('../../trace/renderRunDiff.js')
      const trace = await ciDiff({ ...opts, dir: flags.dir, store: flags.store })
      emit(flags, { trace }, (x) => renderRunDiff(x.trace))
      if (trace.status !== 'exact_match') process.exitCode = 1
    })
  common(ci.command('normalize <artifact>'))
    .description('rewrite an artifact in stable form: timestamps, durations and generated ids normalised')
    .option('-o, --out <file>', 'write here instead of over the input')
    .action(async (input: string, opts: { out?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { ciNormalize } = await import('../../trace/ciNormalize.js')
      const r = await ciNormalize({ input, ...(opts.out ? { out: opts.out } : {}), dir: flags.dir, store: flags.store })
      emit(flags, r, (x) => `normalised ${x.steps} steps -> ${x.artifact}`)
    })
  common(ci.command('replay'))
    .description('validate an artifact against the run schema (exit 5 with the first problem when it is not valid)')
    .requiredOption('--artifact <file>', 'the *.run.json to check')
    .action(async (opts: { artifact: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { validateArtifact } = await import('../../trace/validateArtifact.js')
      const r = validateArtifact({ artifact: opts.artifact, dir: flags.dir })
      const { describeArtifact } = await import('../../trace/describeArtifact.js')
      emit(flags, r, describeArtifact)
    })
}
