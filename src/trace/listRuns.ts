import { RunStore, type ListRunsArgs, type RunSummary } from './RunStore.js'
import { resolveStore, type StoreChoice } from './resolveStore.js'

/** Recorded runs, newest first (from `runs.db`). */
export async function listRuns(args: ListRunsArgs & StoreChoice = {}): Promise<RunSummary[]> {
  const runs = RunStore.open({ store: await resolveStore(args) })
  try {
    return runs.list(args)
  } finally {
    runs.close()
  }
}
