import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { digest, scanCounts } from '../schemas.js'

export const scan = defineOperation({
  name: 'scan',
  description:
    "Scan the workspace as the service's watcher knows it (reading only what changed) and make its trees durable: the tree, its counts and every symlink. For a client that builds an image of its own on the scan (Claude Code's hooks, the LangGraph checkpointer, through `servedScanner`): the client holds the workspace lock while it asks, which this scan therefore does not take. It registers as a writer of the store, as the client has, so that gc keeps what it writes; with a gc waiting to run it is refused at once (the client scans itself).",
  input: { respectGitignore: z.boolean().describe('apply .gitignore files') },
  output: z.object({ tree: digest, ...scanCounts, symlinks: z.array(z.object({ path: z.string(), target: z.string() })).describe('every symlink of the tree, by path') }),
  annotations: { readOnly: false, destructive: false, idempotent: true },
  surfaces: { only: ['http'], why: "it serves a client that scans through the service's warm watcher; elsewhere the client scans itself" },
  async run(where, { respectGitignore }, { scanner }) {
    const [{ openStore }, { fullScanner }, { withWriteLock }] = await Promise.all([
      import('../../store/findStore.js'),
      import('../../world/scan/snapshotWorkspace.js'),
      import('../../store/storeLock.js'),
    ])
    const { store, workspace } = await openStore(where)
    const scan = async () => {
      const { trees: _trees, persist, ...result } = await (scanner ?? fullScanner)({ store, workspace, respectGitignore })
      await persist()
      return result
    }
    // not waiting: the gc waits for the client's registration, and the client for this answer
    return withWriteLock(store, scan, { timeoutMs: 0 })
  },
})
