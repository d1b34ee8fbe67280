import { RunStore } from './RunStore.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'

/** Forget recorded runs (ids, prefixes or `latest`); gc then reclaims their objects. Returns the run ids removed. */
export async function removeRuns({ specs, ...where }: { specs: string[] } & StoreLocator): Promise<string[]> {
  const runs = RunStore.open({ store: (await openStore(where)).store })
  try {
    const removed: string[] = []
    for (const spec of specs) removed.push(await runs.remove(spec))
    return removed
  } finally {
    runs.close()
  }
}
