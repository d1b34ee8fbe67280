import { UntrustedCommandError, UsageError } from '../../errors/index.js'
import type { Run } from '../core/Run.js'
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
 * The recorded command, when replay may run it: `trust` says so, or this store recorded
 * the same run with the same command. A run read from a file or brought from elsewhere
 * names whatever its author wrote there, so it runs only with the caller's consent.
 */
export async function trustedRecordedCommand({ run, store, trust }: { run: Run; store: Store; trust: boolean }): Promise<string[]> {
  const command = recordedCommandOf(run)
  if (!command) throw new UsageError(`run ${run.runId} has no recorded command; give one after --`)
  if (command.some((a) => a.includes('[redacted'))) throw new UsageError(`the recorded command of ${run.runId} carried a secret and was redacted; give the command after --`)
  if (trust || (await recordedHere(run, command, store))) return command
  throw new UntrustedCommandError(
    `run ${run.runId} was not recorded in this store, and replaying it would run its recorded command: ${shellQuote(command)}. Give the command after -- (forkpoint replay RUN -- CMD…), or pass --trust-command to run that one`,
    { runId: run.runId, command },
  )
}

async function recordedHere(run: Run, command: string[], store: Store): Promise<boolean> {
  const runs = RunStore.open({ store })
  try {
    const local = runs.find(run.runId)
    if (!local) return false
    const stored = recordedCommandOf(await runs.get(local))
    return stored !== null && stored.length === command.length && stored.every((a, i) => a === command[i])
  } finally {
    runs.close()
  }
}
