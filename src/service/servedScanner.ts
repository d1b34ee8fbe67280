import type { ScanResult } from '../world/scan/scanWorkspace.js'
import { type WorldScanner, fullScanner } from '../world/scan/snapshotWorkspace.js'
import { callService } from './callService.js'

/**
 * A scanner (for `withWorldScan`, which holds the workspace lock and a writer
 * registration meanwhile) that asks the store's running service for the scan: its
 * watcher knows what changed, so the workspace is not read here. A full scan here when
 * no service answers, or when the one that answers cannot give it (another workspace's,
 * an older version without `scan`, one that wants a token, one going away): the locks
 * held make a full scan right whatever the service did.
 */
export const servedScanner: WorldScanner = async (args) => {
  const served = await callService({ dir: args.workspace, store: args.store }, 'scan', { respectGitignore: args.respectGitignore }).catch(() => null)
  if (served === null) return fullScanner(args)
  // the service made its trees durable; what this process adds (an image) is synced here
  return { ...(served as Omit<ScanResult, 'trees' | 'persist'>), trees: new Map(), persist: () => args.store.sync() }
}
