import { z } from 'zod'
import { checkArgs, snapshotId as id } from './checkArgs.js'
import type { StoreLocator } from '../store/findStore.js'
import type { WorldScanner } from '../world/scan/snapshotWorkspace.js'
import { type RequestPolicy, confineRemote, confineRunFiles } from './requestPolicy.js'

/** What an operation gets besides its arguments: the caller's cancel, what requests may reach, where to report progress, and the service's warm scanner. */
export interface OperationContext {
  signal: AbortSignal
  policy: RequestPolicy
  onProgress?: ((progress: object) => void) | undefined
  scanner?: WorldScanner | undefined
}

/** An operation's handler: the store locator, the checked arguments and the context in, a JSON-able result out. */
type Handler<Args> = (where: StoreLocator, args: Args, ctx: OperationContext) => Promise<object>

const branchName = z.string().min(1).describe('a branch name (PARENT/NAME for a branch of a branch)')
const keepLeftovers = z.boolean().optional().describe('snapshot the versions kept beside conflicts (NAME~LABEL) that are still there, instead of refusing')

/**
 * The CLI's workspace operations, as the MCP server's tools and the HTTP service's
 * endpoints, each on the store the server was started for. Results are the operation's
 * JSON (what the CLI prints with `--json`, less its `schemaVersion`); each loads its
 * modules when first called, as the CLI does. `mcp: false`: an endpoint, not a tool.
 */
export const OPERATIONS = {
  snapshot: {
    description: 'Snapshot the workspace (files, and the run recorded since the last snapshot) as a new image; HEAD moves to it.',
    input: { message: z.string().optional().describe('what this snapshot is') },
    run: (async (where, { message }, { scanner, onProgress }) => {
      const { snapshotAgent } = await import('../image/snapshotAgent.js')
      const progress = onProgress && ((done: number, total: number) => onProgress({ done, total }))
      return snapshotAgent({ ...where, ...(message === undefined ? {} : { message }), ...(scanner ? { scanner } : {}), ...(progress ? { onProgress: progress } : {}) })
    }) as Handler<{ message?: string | undefined }>,
  },
  status: {
    description: "The workspace's changes since HEAD, HEAD's id and branch, and a merge in progress if any.",
    input: {},
    run: (async (where, _, { scanner }) => {
      const { status } = await import('../world/workspace/status.js')
      return status({ ...where, scanner })
    }) as Handler<object>,
  },
  diff: {
    description:
      "What changed between two snapshots (b defaults to the workspace), with patch a unified diff in git's format (binary files and files over 8 MiB named, not shown; whole files up to 16 MiB, then patchTruncated), or between two recorded runs up to their first divergence.",
    input: {
      a: z.string().min(1).describe('a snapshot or a run'),
      b: z.string().min(1).optional().describe('a snapshot or a run'),
      patch: z.boolean().optional().describe('snapshots: add the unified diff of their files'),
    },
    run: (async (where, { a, b, patch }, { policy }) => {
      await confineRunFiles(policy, a, b)
      const { diffImagesOrRuns } = await import('../image/diffImagesOrRuns.js')
      return diffImagesOrRuns({ ...where, a, b, patch: patch ?? false })
    }) as Handler<{ a: string; b?: string | undefined; patch?: boolean | undefined }>,
  },
  log: {
    description: 'The history from a snapshot (default HEAD), newest first.',
    input: { ref: id.optional(), limit: z.number().int().min(1).optional().describe('at most this many (default 50)') },
    run: (async (where, { ref, limit }) => {
      const { log } = await import('../world/workspace/log.js')
      return { entries: await log({ ...where, from: ref ?? 'HEAD', limit: limit ?? 50 }) }
    }) as Handler<{ ref?: string | undefined; limit?: number | undefined }>,
  },
  checkout: {
    description:
      "Put a snapshot's files in the workspace and move HEAD to it; refuses to overwrite uncommitted changes unless force. With paths, restores only those files or directories from it (over uncommitted changes, as git checkout ID -- PATH does) and HEAD stays.",
    input: {
      id,
      force: z.boolean().optional().describe('discard uncommitted changes'),
      paths: z.array(z.string().min(1)).min(1).optional().describe('restore only these paths (relative to the workspace)'),
    },
    run: (async (where, { id, force, paths }) => {
      if (paths) {
        const { checkoutPaths } = await import('../world/checkout/restorePaths.js')
        return checkoutPaths({ ...where, id, paths, force })
      }
      const { checkout } = await import('../world/checkout/checkout.js')
      return checkout({ ...where, id, force: force ?? false })
    }) as Handler<{ id: string; force?: boolean | undefined; paths?: string[] | undefined }>,
  },
  branch: {
    description: 'Make a copy-on-write branch of the workspace: try something there, then commit it or abort it.',
    input: { name: branchName, backend: z.enum(['overlay', 'reflink', 'copy', 'auto']).optional() },
    run: (async (where, { name, backend }) => {
      const { makeBranch } = await import('../branch/lifecycle/makeBranch.js')
      return makeBranch({ ...where, name, backend: backend ?? 'auto' })
    }) as Handler<{ name: string; backend?: 'overlay' | 'reflink' | 'copy' | 'auto' | undefined }>,
  },
  commit: {
    description:
      "Apply a branch to its parent and end it (three-way), then send the branch's deferred effects. A conflict is an error; into the workspace it leaves the commit in progress, the conflicts marked in the files: fix them, then commit_continue, or commit_abort.",
    input: { name: branchName, failIfStale: z.boolean().optional().describe('refuse if a sibling committed first') },
    run: (async (where, { name, failIfStale }) => {
      const { commitNamedWithEffects } = await import('../effects/branchEffects.js')
      return commitNamedWithEffects({ ...where, name, onConflict: failIfStale ? 'fail' : 'merge', stopOnConflict: true })
    }) as Handler<{ name: string; failIfStale?: boolean | undefined }>,
  },
  commit_continue: {
    description: 'Finish a branch commit stopped on conflicts, once the files are fixed (refused while markers or, unless keepLeftovers, NAME~LABEL files remain).',
    input: { name: branchName, keepLeftovers: keepLeftovers },
    run: (async (where, { name, keepLeftovers }) => {
      const { commitNamedWithEffects } = await import('../effects/branchEffects.js')
      return commitNamedWithEffects({ ...where, name, stopOnConflict: true, resume: true, keepLeftovers: keepLeftovers ?? false })
    }) as Handler<{ name: string; keepLeftovers?: boolean | undefined }>,
  },
  commit_abort: {
    description: "Undo a branch commit stopped on conflicts: the workspace's files as they were; the branch stays live.",
    input: { name: branchName },
    run: (async (where, { name }) => {
      const { abortCommit } = await import('../branch/commit/abortCommit.js')
      return abortCommit({ ...where, name })
    }) as Handler<{ name: string }>,
  },
  abort: {
    description: 'End a branch without applying it; its deferred effects are dropped.',
    input: { name: branchName },
    run: (async (where, { name }) => {
      const { abortNamedWithEffects } = await import('../effects/branchEffects.js')
      return abortNamedWithEffects({ ...where, name })
    }) as Handler<{ name: string }>,
  },
  run: {
    description: 'Run a command sandboxed (a branch, or the workspace, at the workspace path; no network unless net is host); returns its exit code, output and changed paths.',
    input: {
      command: z.array(z.string()).min(1).describe('the program and its arguments'),
      branch: branchName.optional(),
      net: z.enum(['none', 'host']).optional(),
      timeout: z.string().optional().describe('e.g. 30s, 5m'),
    },
    run: (async (where, { command, branch, net, timeout }, { signal }) => {
      const { runWithEffects } = await import('../effects/runWithEffects.js')
      // a client's cancel kills the command's process tree
      return runWithEffects({ ...where, cmd: command, signal, ...(branch ? { branch } : {}), ...(net ? { net } : {}), ...(timeout ? { timeout } : {}) })
    }) as Handler<{ command: string[]; branch?: string | undefined; net?: 'none' | 'host' | undefined; timeout?: string | undefined }>,
  },
  fork: {
    description: 'Make N children of an image, each an image of its own to snapshot on, diff and merge.',
    input: { id: id.optional(), count: z.number().int().min(1).max(1000) },
    run: (async (where, { id, count }) => {
      const { forkImage } = await import('../image/forkImage.js')
      return { children: await forkImage({ ...where, id: id ?? 'HEAD', n: count }) }
    }) as Handler<{ id?: string | undefined; count: number }>,
  },
  merge: {
    description:
      'Merge an image into HEAD and the workspace, layer by layer (files three-way); a conflict (outcome "conflict") leaves the merge in progress: fix the files, then merge_continue, or merge_abort.',
    input: { from: id },
    run: (async (where, { from }) => {
      const { merge } = await import('../image/merge.js')
      return merge({ ...where, from })
    }) as Handler<{ from: string }>,
  },
  merge_continue: {
    description: 'Finish a merge stopped on conflicts, once the files are fixed (refused while markers or, unless keepLeftovers, NAME~LABEL files remain).',
    input: { keepLeftovers },
    run: (async (where, { keepLeftovers }) => {
      const { continueMerge } = await import('../image/continueMerge.js')
      return continueMerge({ ...where, keepLeftovers: keepLeftovers ?? false })
    }) as Handler<{ keepLeftovers?: boolean | undefined }>,
  },
  merge_abort: {
    description: 'Undo a merge stopped on conflicts: the workspace back to HEAD exactly.',
    input: {},
    run: (async (where) => {
      const { abortMerge } = await import('../image/abortMerge.js')
      return abortMerge(where)
    }) as Handler<object>,
  },
  runs: {
    description: 'The recorded runs, newest first.',
    input: { limit: z.number().int().min(1).optional().describe('at most this many (default 20)') },
    run: (async (where, { limit }) => {
      const { listRuns } = await import('../trace/core/listRuns.js')
      return { runs: await listRuns({ ...where, ...(limit ? { limit } : {}) }) }
    }) as Handler<{ limit?: number | undefined }>,
  },
  replay: {
    description: 'Re-execute a recorded run offline, every response served from the recording; an error names the first step that differs.',
    input: { run: z.string().min(1).describe('a run id, unique prefix, or latest') },
    run: (async (where, { run: spec }, { policy }) => {
      await confineRunFiles(policy, spec)
      const { loadRun } = await import('../trace/core/loadRun.js')
      const { replayRun } = await import('../trace/replay/replayRun.js')
      const run = await loadRun({ ...where, spec })
      const { replayed: _replayed, agentStdout, ...summary } = await replayRun({ ...where, run, trustCommand: false, stdout: 'capture' })
      return { ...summary, stdout: agentStdout }
    }) as Handler<{ run: string }>,
  },
  scan: {
    mcp: false,
    description:
      "Scan the workspace as the service's watcher knows it (reading only what changed) and make its trees durable: the tree, its counts and every symlink. For a client that builds an image of its own on the scan (Claude Code's hooks, the LangGraph checkpointer, through `servedScanner`): the client holds the workspace lock while it asks, which this scan therefore does not take. It registers as a writer of the store, as the client has, so that gc keeps what it writes; with a gc waiting to run it is refused at once (the client scans itself).",
    input: { respectGitignore: z.boolean().describe('apply .gitignore files') },
    run: (async (where, { respectGitignore }, { scanner }) => {
      const [{ openStore }, { fullScanner }, { withWriteLock }] = await Promise.all([
        import('../store/findStore.js'),
        import('../world/scan/snapshotWorkspace.js'),
        import('../store/storeLock.js'),
      ])
      const { store, workspace } = await openStore(where)
      const scan = async () => {
        const { trees: _trees, persist, ...result } = await (scanner ?? fullScanner)({ store, workspace, respectGitignore })
        await persist()
        return result
      }
      // not waiting: the gc waits for the client's registration, and the client for this answer
      return withWriteLock(store, scan, { timeoutMs: 0 })
    }) as Handler<{ respectGitignore: boolean }>,
  },
  show: {
    mcp: false,
    description: 'An image layer by layer; ID:PATH a file (with its text when short UTF-8) or a directory of an image; a blob with its text; any other object.',
    input: { id: id.describe('a snapshot or object id, or ID:PATH for a path of an image') },
    run: (async (where, { id }) => {
      const { showSpec } = await import('../image/showSpec.js')
      return showSpec({ ...where, id })
    }) as Handler<{ id: string }>,
  },
  push: {
    mcp: false,
    description:
      'Send an image and its history to a remote (file:///dir[:tag] inside the workspace or an --allow-path directory, oci://host/repo[:tag] or s3://bucket/prefix[:tag] under an --allow-remote of the service); only what the remote lacks travels.',
    input: { id, remote: z.string().min(1) },
    run: (async (where, { id, remote }, { signal, onProgress, policy }) => {
      await confineRemote(policy, remote)
      const { pushImage } = await import('../registry/transfer/pushImage.js')
      return pushImage({ ...where, id, remote, signal, ...(onProgress ? { onProgress } : {}) })
    }) as Handler<{ id: string; remote: string }>,
  },
  pull: {
    mcp: false,
    description: 'Fetch an image from a remote into the store (tagged as the remote tag); the remotes push may use.',
    input: { remote: z.string().min(1), tag: z.string().min(1).optional() },
    run: (async (where, { remote, tag }, { signal, onProgress, policy }) => {
      await confineRemote(policy, remote)
      const { pullImage } = await import('../registry/transfer/pullImage.js')
      return pullImage({ ...where, remote, signal, ...(tag ? { tag } : {}), ...(onProgress ? { onProgress } : {}) })
    }) as Handler<{ remote: string; tag?: string | undefined }>,
  },
} as const

export type OperationName = keyof typeof OPERATIONS
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[]

/** Run an operation on arguments not yet checked: the zod check, then the handler. @throws {UsageError} arguments the operation's schema refuses */
export async function runOperation(name: OperationName, where: StoreLocator, args: unknown, ctx: OperationContext): Promise<object> {
  const op = OPERATIONS[name]
  return (op.run as Handler<unknown>)(where, checkArgs(name, op.input, args), ctx)
}
