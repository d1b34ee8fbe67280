import { RunStore } from './RunStore.js'
import { resolveStore, type StoreChoice } from './resolveStore.js'

/** Forget recorded runs (ids, prefixes or `latest`); gc then reclaims their objects. Returns the run ids removed. */
export async function removeRuns({ specs, ...where }: { specs: string[] } & StoreChoice): Promise<string[]> {
  const runs = RunStore.open({ store: await resolveStore(where) })
  try {
    const removed: string[] = []
    for (const spec of specs) removed.push(await runs.remove(spec))
    return removed
  } finally {
    runs.close()
  }
}
