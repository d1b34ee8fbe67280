import type { Command } from 'commander'
import type { ReplayResult } from '../../trace/replay/replayRun.js'
import type { AgentStdout } from '../../trace/record/spawnAgent.js'
import { type Where, common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { type RedactionRuleFlags, redactionRuleOptions, redactionRules } from '../redactionFlags.js'
import { counted } from '../../util/plural.js'

/** What a replay did, without the replayed run and the agent's output. */
export type ReplaySummary = Omit<ReplayResult, 'replayed' | 'agentStdout'>

export interface ReplayOptions extends Where, RedactionRuleFlags {
  /** run id, unique prefix, latest, or a *.run.json file */
  spec: string
  /** the agent command (default: the recorded one) */
  command?: string[]
  trustCommand?: boolean
  liveFrom?: number
  /** where the agent's stdout goes (default: inherited) */
  stdout?: AgentStdout
}

/** `forkpoint replay RUN`: a recorded run re-executed offline, every response served from the recording. */
export async function replayCommand({ dir, store, spec, command, trustCommand, liveFrom, stdout = 'inherit', ...flags }: ReplayOptions): Promise<ReplaySummary> {
  const rules = redactionRules(flags)
  const { loadRun } = await import('../../trace/core/loadRun.js')
  const { replayRun } = await import('../../trace/replay/replayRun.js')
  const run = await loadRun({ spec, dir, store })
  const {
    replayed: _r,
    agentStdout: _o,
    ...summary
  } = await replayRun({ run, command, trustCommand: Boolean(trustCommand), liveFrom, rules, dir, store, stdout, env: process.env })
  return summary
}

export function replayView(liveFrom: number | undefined): Rendering<ReplaySummary> {
  return {
    human: (r) =>
      r.forked
        ? `forked ${r.forked.runId} from ${r.runId} at step ${liveFrom}: ${counted(r.served, 'step')} served, ${r.steps - r.served} live`
        : `replayed ${r.runId} offline (${r.isolation}): ${r.served}/${r.steps} steps served, identical to the recording`,
  }
}

export function registerReplay(program: Command): void {
  redactionRuleOptions(common(program.command('replay')))
    .description('re-execute a recorded run offline, every response served from the recording (exit 3 on divergence, 4 on network access)')
    .argument('<run>', 'run id, unique prefix, latest, or a *.run.json file')
    .argument('[command...]', 'the agent command after -- (default: the recorded one)')
    .option('--trust-command', 'run the recorded command of a run from a file or another store (it runs whatever the run names)')
    .option('--live-from <step>', 'serve steps before STEP from the recording, run the rest live and record a new run', (v) => Number.parseInt(v, 10))
    .action(async (spec: string, command: string[], opts: RedactionRuleFlags & { liveFrom?: number; trustCommand?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const summary = await replayCommand({ dir: flags.dir, store: flags.store, spec, command, ...opts, stdout: flags.json ? 'stderr' : 'inherit' })
      print(flags, summary, replayView(opts.liveFrom))
    })
}
