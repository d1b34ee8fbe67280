import { UntrustedCommandError, UsageError } from '../../errors/index.js'
import type { Run } from '../../objects/Run.js'
import { RunStore } from '../core/RunStore.js'
import type { Store } from '../../store/Store.js'
import { shellQuote } from '../core/shellQuote.js'

/** The command a run recorded (`meta.command`), or null when it holds none usable. */
export function recordedCommandOf(run: Run): string[] | null {
  const command = run.meta['command']
  if (!Array.isArray(command) || command.length === 0 || !command.every((a) => typeof a === 'string')) return null
  return command
}

/**
 * The recorded command, when replay may run it: this store recorded the same run with the
 * same command (`run --record` marked it so in `runs.db`), or `trust` vouches for a run
 * this store does not hold (a file the caller named). A run this store imported (a trace
 * given to `snapshot`, a replay's fork) is data: its command never runs, `trust` or not.
 */
export async function trustedRecordedCommand({ run, store, trust }: { run: Run; store: Store; trust: boolean }): Promise<string[]> {
  const command = recordedCommandOf(run)
  if (!command) throw new UsageError(`run ${run.runId} has no recorded command; give one after --`)
  if (command.some((a) => a.includes('[redacted'))) throw new UsageError(`the recorded command of ${run.runId} carried a secret and was redacted; give the command after --`)
  const origin = await originHere(run, command, store)
  if (origin === 'recorded' || (trust && origin === null)) return command
  const why =
    origin === 'imported'
      ? `run ${run.runId} was imported into this store, not recorded by its own run --record, so its recorded command never runs (--trust-command does not change that): ${shellQuote(command)}. Give the command after -- (forkpoint replay RUN -- CMD…)`
      : `run ${run.runId} was not recorded in this store, and replaying it would run its recorded command: ${shellQuote(command)}. Give the command after -- (forkpoint replay RUN -- CMD…), or pass --trust-command to run that one`
  throw new UntrustedCommandError(why, { runId: run.runId, command })
}

/** 'recorded' only for this very run with this very command; a run whose command differs from the one recorded here is not the one this store holds (null). */
async function originHere(run: Run, command: string[], store: Store): Promise<'recorded' | 'imported' | null> {
  const runs = RunStore.open({ store })
  try {
    const origin = runs.origin(run.runId)
    if (origin !== 'recorded') return origin
    const stored = recordedCommandOf(await runs.get(run.runId))
    return stored !== null && stored.length === command.length && stored.every((a, i) => a === command[i]) ? 'recorded' : null
  } finally {
    runs.close()
  }
}
