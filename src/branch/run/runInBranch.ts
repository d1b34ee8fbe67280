import { basename, dirname } from 'node:path'
import { promises as fs } from 'node:fs'
import type { Store } from '../../store/Store.js'
import { type SandboxLimits } from '../../sandbox/limits.js'
import type { EgressProxy, NetMode, SandboxResult, SandboxSpec } from '../../sandbox/runSandboxed.js'
import { sandboxRuntime } from '../../sandbox/SandboxRuntime.js'
import { backendByName } from '../backends/chooseBackend.js'
import { liveDir } from '../lifecycle/branchStore.js'
import { changedBetween, fingerprint } from '../lifecycle/fingerprint.js'
import { noteRunningSandbox } from './runningSandboxes.js'
import { assertNotClosing } from '../lifecycle/closingMark.js'
import { normaliseWritten, restoreRoot } from '../commit/normaliseWritten.js'
import { gitGuards, madeRunPaths, removeMadeGitPaths, repositoriesIn } from './guardGit.js'
import { heldBackWith } from '../../world/checkout/heldBackGitPath.js'
import { readGitRunPaths } from '../../world/workspace/gitRunPaths.js'
import { throughHolder } from '../mount/overlayMount.js'
import { settleInTurn } from '../../util/settleAll.js'
import { refuseBeyond, removeBeyond } from './removeBeyond.js'
import type { BranchState } from '../types.js'

export interface RunOptions extends SandboxLimits {
  /**
   * "none" (default): no network at all, not even the host's 127.0.0.1. "host": the host's network. An egress
   * proxy: a network of the sandbox's own leading only to it (`withEgressEffects`).
   */
  net?: NetMode | EgressProxy
  /** The command's environment (default: this process's). */
  env?: NodeJS.ProcessEnv
  /** Working directory inside the sandbox (default: the workspace path). */
  cwd?: string
  /** Bytes for the command's stdin. */
  input?: string | Buffer
  /** Abort kills the whole process tree. */
  signal?: AbortSignal
  /** Host paths shown read-only inside (nothing else of the host is). */
  expose?: string[]
  /** Each chunk of output as the command writes it. */
  onOutput?: SandboxSpec['onOutput']
  /** "inherit": the command uses this process's stdin, stdout and stderr (`forkpoint shell`). */
  stdio?: SandboxSpec['stdio']
}

export interface RunResult extends SandboxResult {
  /** The branch the command ran in, or null for the workspace itself. */
  branch: string | null
  /** Paths (relative to the workspace) the command created, changed or removed. */
  changedPaths: string[]
}

/**
 * Run a command sandboxed with a branch (or, without one, the workspace itself, its store
 * kept out of reach) mounted at the workspace's own path.
 */
export async function runInBranch({
  store,
  workspace,
  state,
  cmd,
  options,
}: {
  store: Store
  workspace: string
  state: BranchState | null
  cmd: string | string[]
  options: RunOptions
}): Promise<RunResult> {
  const backend = state ? backendByName(state.backend) : null
  const dir = state ? liveDir(store, state.id) : null
  const view = backend && dir && state ? backend.viewMount(state, dir) : workspace
  const upper = backend && dir ? backend.changeCandidates(dir) : null
  const watched = upper ?? view
  const skip = state ? undefined : storeNameInside(store, workspace)
  // where what the command wrote is made plain (a path past PATH_MAX there is reached a piece at a time)
  const normaliseRoot = state ? throughHolder(state.holder, view) : workspace
  const walk = (beyond: string[], madeReadable?: string[]) => fingerprint(watched, { skip, beyond, ...(madeReadable ? { madeReadable } : {}) })
  // noted from before the walk to the end of the checks after it: runs in one view take turns (runningSandboxes.ts)
  const running = await noteRunningSandbox(store, { branch: state?.name ?? null, command: cmd })
  try {
    if (state) assertNotClosing(store, state)
    const beyondBefore: string[] = []
    const before = await walk(beyondBefore)
    if (beyondBefore.length > 0) throw refuseBeyond(beyondBefore[0]!)
    const rootBefore = await fs.stat(normaliseRoot)
    // in the workspace itself, what git runs is the host's: a branch's is held back when it is committed
    const runPaths = state ? null : await readGitRunPaths(workspace, { nested: repositoriesIn(before) })
    const guards = runPaths ? gitGuards(workspace, before, heldBackWith(runPaths)) : {}
    // The store is never visible inside: hidden wherever it lies (under the workspace, or an exposed path).
    const result = await sandboxRuntime().run({ ...options, view, workspace, cmd, namespaceHolder: state?.holder?.pid, hide: [store.root], ...guards })
    const madeReadable: string[] = []
    const beyond: string[] = []
    const after = await walk(beyond, madeReadable)
    const written = changedBetween(before, after)
    // each step runs whatever became of the ones before: a failure of one never leaves another's danger in place
    const [rootKept, removedBeyond, normalised, madeGit] = await settleInTurn([
      () => restoreRoot(normaliseRoot, rootBefore),
      () => removeBeyond(normaliseRoot, beyond),
      () => normaliseWritten({ view: normaliseRoot, paths: written, before }),
      async () =>
        runPaths ? removeMadeGitPaths({ workspace, changed: written, before, after, held: heldBackWith([...runPaths, ...(await madeRunPaths(workspace, before, after))]) }) : [],
    ])
    // an overlay's upper layer gains directories by copy-up alone: not changes, but still written by the sandbox
    const changedPaths = changedBetween(before, after, { dirs: upper === null })
    const unreadable = madeReadable.map((path) => `made ${path || '.'} readable by its owner: the command left it unreadable, hiding what it holds`)
    const warnings = [...result.warnings, ...unreadable, ...rootKept, ...removedBeyond, ...madeGit, ...normalised]
    return { ...result, warnings, branch: state?.name ?? null, changedPaths }
  } finally {
    await running.done()
  }
}

function storeNameInside(store: Store, workspace: string): string | undefined {
  return dirname(store.root) === workspace ? basename(store.root) : undefined
}
