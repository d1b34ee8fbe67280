import { RunStore, type ListRunsArgs, type RunSummary } from './RunStore.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'

/** Recorded runs, newest first (from `runs.db`). */
export async function listRuns(args: ListRunsArgs & StoreLocator = {}): Promise<RunSummary[]> {
  const runs = RunStore.open({ store: (await openStore(args)).store, readOnly: true })
  try {
    return runs.list(args)
  } finally {
    runs.close()
  }
}
