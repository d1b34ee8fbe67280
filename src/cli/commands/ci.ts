import type { Command } from 'commander'
import type { CiOutcome } from '../../trace/ci/ciCheck.js'
import type { RunDiff } from '../../trace/diff/diffRuns.js'
import type { Isolation } from '../../trace/record/spawnAgent.js'
import type { ArtifactReport } from '../../trace/ci/validateArtifact.js'
import { describeArtifact } from '../../trace/ci/describeArtifact.js'
import { renderRunDiff } from '../../trace/diff/renderRunDiff.js'
import { type Where, common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { redactionOptions, redactionRuleOptions } from '../redactionFlags.js'
import { type RecordingFlags, recordingOptions } from '../../trace/record/recordingOptions.js'
import { type RedactionRuleFlags, redactionRules } from '../../trace/redact/userRules.js'
import { counted } from '../../util/plural.js'

const CI_EXIT: Record<CiOutcome, number> = { pass: 0, diff: 1, offline_violation: 4 }

export interface CiRecordResult {
  runId: string
  artifact: string
  steps: number
  exitCode: number
}

/** `forkpoint ci record`: the entrypoint recorded, its normalised golden artifact written (the agent's stdout goes to stderr). */
export async function ciRecordCommand({ dir, store, entrypoint, out, ...flags }: Where & RecordingFlags & { entrypoint: string; out: string }): Promise<CiRecordResult> {
  const { ciRecord } = await import('../../trace/ci/ciRecord.js')
  const r = await ciRecord({ entrypoint, out, dir, store, ...recordingOptions(flags), stdout: 'stderr', env: process.env })
  return { runId: r.runId, artifact: r.artifact, steps: r.steps, exitCode: r.exitCode }
}

export const ciRecordView: Rendering<CiRecordResult> = { human: (x) => `recorded ${x.runId}: ${counted(x.steps, 'step')} -> ${x.artifact}` }

export interface CiCheckOutput {
  outcome: CiOutcome
  trace: RunDiff
  offlineViolations: string[]
  isolation: Isolation
  agentExitCode: number
  actualArtifact: string | null
}

/** `forkpoint ci check`: the entrypoint run (offline unless `live`) and diffed against the golden run. */
export async function ciCheckCommand({
  dir,
  store,
  redactKey,
  redactPath,
  redactPattern,
  ...options
}: Where & RedactionRuleFlags & { entrypoint: string; expected: string; live?: boolean; actualOut?: string; window?: number }): Promise<CiCheckOutput> {
  const rules = redactionRules({ redactKey, redactPath, redactPattern })
  const { ciCheck } = await import('../../trace/ci/ciCheck.js')
  const r = await ciCheck({ ...options, rules, live: Boolean(options.live), dir, store, stdout: 'stderr', env: process.env })
  return { outcome: r.outcome, trace: r.diff, offlineViolations: r.offlineViolations, isolation: r.isolation, agentExitCode: r.exitCode, actualArtifact: r.actualArtifact }
}

export const ciCheckView: Rendering<CiCheckOutput> = {
  human: (x) => (x.outcome === 'offline_violation' ? `runs match, but the agent tried to reach: ${x.offlineViolations.join(', ')}` : renderRunDiff(x.trace)),
  exit: (x) => CI_EXIT[x.outcome],
}

/** `forkpoint ci diff`: two artifacts compared after normalising both. */
export async function ciDiffCommand({ dir, store, ...options }: Where & { expected: string; actual: string; window?: number }): Promise<{ trace: RunDiff }> {
  const { ciDiff } = await import('../../trace/ci/ciDiff.js')
  return { trace: await ciDiff({ ...options, dir, store, env: process.env }) }
}

export const ciDiffView: Rendering<{ trace: RunDiff }> = { human: (x) => renderRunDiff(x.trace), exit: (x) => (x.trace.status === 'exact_match' ? 0 : 1) }

/** `forkpoint ci normalize`: an artifact rewritten in stable form. */
export async function ciNormalizeCommand({ dir, store, input, out }: Where & { input: string; out?: string }): Promise<{ artifact: string; runId: string; steps: number }> {
  const { ciNormalize } = await import('../../trace/ci/ciNormalize.js')
  return ciNormalize({ input, ...(out ? { out } : {}), dir, store })
}

export const ciNormalizeView: Rendering<{ artifact: string; steps: number }> = { human: (x) => `normalised ${counted(x.steps, 'step')} -> ${x.artifact}` }

/** `forkpoint ci replay`: an artifact validated against the run schema (RunArtifactError, exit 5, when it is not valid). */
export async function ciValidateCommand({ dir, artifact }: Where & { artifact: string }): Promise<ArtifactReport> {
  const { validateArtifact } = await import('../../trace/ci/validateArtifact.js')
  return validateArtifact({ artifact, dir })
}

export const ciValidateView: Rendering<ArtifactReport> = { human: describeArtifact }

/** `forkpoint ci record|check|diff|normalize|replay`: each subcommand one library call. */
export function registerCi(program: Command): void {
  const ci = program.command('ci').description('gate CI on agent behaviour: record a golden run, check against it offline, diff, normalise, validate')
  redactionOptions(common(ci.command('record')))
    .description('record the entrypoint and write its normalised golden artifact')
    .requiredOption('--entrypoint <file>', 'the agent script')
    .requiredOption('--out <file>', 'the artifact to write (*.run.json)')
    .option('--egress', 'record every connection through the egress proxy (any language and client, HTTPS included)')
    .option('--proxy', 'record through the local proxy (any language)')
    .option('--deterministic', 'pin Date and Math.random')
    .action(async (opts: RecordingFlags & { entrypoint: string; out: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await ciRecordCommand({ dir: flags.dir, store: flags.store, ...opts }), ciRecordView)
    })
  redactionRuleOptions(common(ci.command('check')))
    .description('run the entrypoint (offline by default) and diff against the golden run: exit 0 same, 1 diverged, 4 offline violation')
    .requiredOption('--entrypoint <file>', 'the agent script')
    .requiredOption('--expected <artifact>', 'the golden *.run.json')
    .option('--live', 'let the agent use the network and real APIs')
    .option('--actual-out <file>', 'also write the actual run (normalised)')
    .option('--window <n>', 'resync window', (v) => Number.parseInt(v, 10), 10)
    .action(async (opts: RedactionRuleFlags & { entrypoint: string; expected: string; live?: boolean; actualOut?: string; window: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await ciCheckCommand({ dir: flags.dir, store: flags.store, ...opts }), ciCheckView)
    })
  common(ci.command('diff'))
    .description('diff two artifacts after normalising both: exit 0 same, 1 diverged')
    .requiredOption('--expected <artifact>', 'the golden run')
    .requiredOption('--actual <artifact>', 'the run to check')
    .option('--window <n>', 'resync window', (v) => Number.parseInt(v, 10), 10)
    .action(async (opts: { expected: string; actual: string; window: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await ciDiffCommand({ dir: flags.dir, store: flags.store, ...opts }), ciDiffView)
    })
  common(ci.command('normalize <artifact>'))
    .description('rewrite an artifact in stable form: timestamps, durations and generated ids normalised')
    .option('-o, --out <file>', 'write here instead of over the input')
    .action(async (input: string, opts: { out?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await ciNormalizeCommand({ dir: flags.dir, store: flags.store, input, ...opts }), ciNormalizeView)
    })
  common(ci.command('replay'))
    .description('validate an artifact against the run schema (exit 5 with the first problem when it is not valid)')
    .requiredOption('--artifact <file>', 'the *.run.json to check')
    .action(async (opts: { artifact: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await ciValidateCommand({ dir: flags.dir, artifact: opts.artifact }), ciValidateView)
    })
}
