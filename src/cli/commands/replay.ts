import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerReplay(program: Command): void {
  common(program.command('replay'))
    .description('re-execute a recorded run offline, every response served from the recording (exit 3 on divergence, 4 on network access)')
    .argument('<run>', 'run id, unique prefix, latest, or a *.run.json file')
    .argument('[command...]', 'the agent command after -- (default: the recorded one)')
    .option('--trust-command', "run the recorded command of a run from a file or another store (it runs whatever the run names)")
    .option('--live-from <step>', 'serve steps before STEP from the recording, run the rest live and record a new run', (v) => Number.parseInt(v, 10))
    .action(async (spec: string, command: string[], opts: { liveFrom?: number; trustCommand?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { loadRun } = await import('../../trace/loadRun.js')
      const { replayRun } = await import('../../trace/replayRun.js')
      const run = await loadRun({ spec, dir: flags.dir, store: flags.store })
      const result = await replayRun({ run, command, trustCommand: Boolean(opts.trustCommand), liveFrom: opts.liveFrom, dir: flags.dir, store: flags.store, stdout: flags.json ? 'stderr' : 'inherit' })
      const { replayed: _r, agentStdout: _o, ...summary } = result
      emit(flags, summary, (r) =>
        r.forked
          ? `forked ${r.forked.runId} from ${r.runId} at step ${opts.liveFrom}: ${r.served} steps served, ${r.steps - r.served} live`
          : `replayed ${r.runId} offline (${r.isolation}): ${r.served}/${r.steps} steps served, identical to the recording`,
      )
    })
}
