import { resolve } from 'node:path'
import type { Digest } from '../store/digest.js'
import { locateStore } from '../store/findStore.js'
import { initWorkspace } from '../store/initStore.js'
import { Store } from '../store/Store.js'
import { withWriteLock } from '../store/storeLock.js'
import { recoverCheckout } from '../world/checkoutJournal.js'
import { scanWorkspace } from '../world/scanWorkspace.js'
import { withWorkspaceLock } from '../world/workspaceLock.js'
import { type Base, type FoundBase, advanceBase } from './advanceBase.js'
import { Branch, type BranchOptions } from './Branch.js'
import { pruneBaseViews } from './baseView.js'
import { findState, listStates, readGeneration } from './branchStore.js'
import { cleanupOrphans } from './cleanupOrphans.js'
import { createBranch } from './createBranch.js'
import { liveState, viewPath } from './liveBranch.js'
import { type RunOptions, type RunResult, runInBranch } from './runInBranch.js'
import type { BackendName, BranchInfo } from './types.js'

export interface OpenWorkspaceOptions {
  /** The store directory (default: the nearest `.forkpoint/` from `dir` up, else a new `dir/.forkpoint`). */
  store?: string
  /** Backend for new branches (default "auto": overlay, else reflink, else copy). */
  backend?: BackendName | 'auto'
  respectGitignore?: boolean
}

/**
 * A workspace directory and its store, from which copy-on-write branches are made.
 * Opening one finishes interrupted commits and removes what dead processes left behind.
 * Branches start from the workspace as it was scanned when this object made its first
 * branch (or at `refresh()`), with every commit made into it since (by any process)
 * applied: after a commit only the paths it changed are scanned again. Files edited
 * directly in the workspace meanwhile are not in new branches until `refresh()` (a commit
 * still sees them, and conflicts rather than overwrite them).
 * @example
 * const ws = await Workspace.open('.')
 * await ws.withBranch('attempt', async (b) => { await writeFile(`${b.path}/notes.md`, 'hi') })
 */
export class Workspace {
  #base: Base | null = null
  /** The base being brought up to date, shared by every branch made meanwhile. */
  #rebasing: { generation: number; done: Promise<Digest> } | null = null

  private constructor(
    /** The workspace root. */
    readonly dir: string,
    readonly store: Store,
    private readonly options: OpenWorkspaceOptions,
  ) {}

  static async open(dir: string, options: OpenWorkspaceOptions = {}): Promise<Workspace> {
    const found = await locateStore({ cwd: resolve(dir), store: options.store })
    const location = found && (await Store.open(found.storeDir).then(() => true, () => false)) ? found : await initWorkspace({ dir: resolve(dir), store: options.store })
    const ws = new Workspace(location.workspace, await Store.open(location.storeDir), options)
    await recoverCheckout(ws.store, ws.dir)
    await cleanupOrphans({ store: ws.store, workspace: ws.dir })
    await pruneBaseViews(ws.store)
    return ws
  }

  /**
   * Scan the workspace again (only changed files are read), so new branches see it as it
   * is now; under the workspace lock, so never half of a commit into it.
   */
  async refresh(): Promise<Digest> {
    return this.#update(null)
  }

  /**
   * The base brought up to the latest commit: `from` advanced by the commits' records when
   * that can be done, else a scan. Inside the writer registration, as a snapshot takes
   * it (no holder of the workspace lock waits for writers or gc).
   */
  async #update(from: Base | null): Promise<Digest> {
    const { respectGitignore } = this.options
    this.#base = await withWriteLock(this.store, async () => {
      // the workspace lock for reading the workspace only: syncing and the base view come after, as a snapshot's do
      const found: FoundBase = await withWorkspaceLock(this.store, async () => {
        const generation = await readGeneration(this.store, null)
        const advanced = from ? await advanceBase({ store: this.store, workspace: this.dir, from, generation, respectGitignore }) : null
        if (advanced) return advanced
        const scan = await scanWorkspace({ store: this.store, dir: this.dir, write: true, respectGitignore })
        return { tree: scan.tree, generation, persist: scan.persist }
      })
      await found.persist()
      return { tree: found.tree, generation: found.generation }
    })
    return this.#base.tree
  }

  /**
   * The tree new branches start from, brought up to date after any commit into the
   * workspace, by any process. Branches made at once share one update.
   */
  private async baseTree(): Promise<Digest> {
    const generation = await readGeneration(this.store, null)
    if (this.#base?.generation === generation) return this.#base.tree
    if (this.#rebasing?.generation !== generation) {
      const done = this.#update(this.#base)
      const rebasing = { generation, done }
      this.#rebasing = rebasing
      done.finally(() => this.#rebasing === rebasing && (this.#rebasing = null)).catch(() => undefined)
    }
    return this.#rebasing.done
  }

  /** Make a branch of the workspace. @throws {BranchExistsError} @throws {BackendUnavailableError} */
  async branch(name: string, options: BranchOptions = {}): Promise<Branch> {
    const state = await createBranch({ store: this.store, name, parent: null, tree: await this.baseTree(), backend: options.backend ?? this.options.backend, persistent: options.persistent })
    return new Branch(this, this, state)
  }

  /**
   * Run `fn` in a new branch: commit when it returns, abort when it (or the commit) throws.
   * A branch `fn` committed or aborted itself stays as `fn` left it.
   */
  async withBranch<T>(name: string, fn: (branch: Branch) => Promise<T>, options: BranchOptions = {}): Promise<T> {
    const branch = await this.branch(name, options)
    try {
      const value = await fn(branch)
      if (branch.status === 'live') await branch.commit(options)
      return value
    } catch (err) {
      await branch.abort()
      throw err
    }
  }

  /** A live branch by its full name (`attempt`, `attempt/variant`), e.g. one made by another process. @throws {BranchNotFoundError} */
  async openBranch(name: string): Promise<Branch> {
    const state = await liveState(this.store, (await findState(this.store, name)).id)
    const parent = state.parent === null ? this : await this.openBranch(state.name.slice(0, state.name.lastIndexOf('/')))
    return new Branch(this, parent, state)
  }

  /** Every live branch, oldest first. */
  async branches(): Promise<BranchInfo[]> {
    const states = await listStates(this.store)
    return Promise.all(
      states.map(async (s) => ({
        name: s.name,
        path: viewPath(this.store, await liveState(this.store, s.id)),
        parent: s.parent === null ? null : (states.find((p) => p.id === s.parent)?.name ?? null),
        backend: s.backend,
        persistent: s.owner === null,
        createdAt: s.createdAt,
      })),
    )
  }

  /**
   * Run a command sandboxed: own mount, PID and (with `net: "none"`, the default) network
   * namespaces, unprivileged, the branch mounted at this workspace's own path (without a
   * branch: the workspace itself, its store read-only), the rest of the system read-only.
   * @throws {SandboxError} the sandbox cannot be set up here, or bad limits
   */
  async run(cmd: string | string[], options: RunOptions & { branch?: Branch | string } = {}): Promise<RunResult> {
    const { branch, ...rest } = options
    const target = typeof branch === 'string' ? await this.openBranch(branch) : branch
    const state = target ? await liveState(this.store, target.id) : null
    return runInBranch({ store: this.store, workspace: this.dir, state, cmd, options: rest })
  }
}
