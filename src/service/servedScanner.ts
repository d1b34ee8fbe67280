import type { ScanResult } from '../world/scanWorkspace.js'
import { type WorldScanner, fullScanner } from '../world/snapshotWorkspace.js'
import { callService } from './callService.js'

/**
 * A scanner (for `withWorldScan`, which holds the workspace lock and a writer
 * registration meanwhile) that asks the store's running service for the scan: its
 * watcher knows what changed, so the workspace is not read here. A full scan here when
 * no service answers. How adapters that build images of their own use a running service.
 */
export const servedScanner: WorldScanner = async (args) => {
  const served = (await callService({ dir: args.workspace, store: args.store }, 'scan', { respectGitignore: args.respectGitignore })) as Omit<
    ScanResult,
    'trees' | 'persist'
  > | null
  if (served === null) return fullScanner(args)
  // the service made its trees durable; what this process adds (an image) is synced here
  return { ...served, trees: new Map(), persist: () => args.store.sync() }
}
