import { existsSync } from 'node:fs'
import { UsageError } from '../errors/index.js'
import { join, resolve } from 'node:path'
import type { Digest } from '../objects/digest.js'
import { locateStore, STORE_DIR_NAME, type StoreLocator } from '../store/findStore.js'
import { initWorkspace } from '../store/initStore.js'
import { Store } from '../store/Store.js'
import { withWriteLock } from '../store/storeLock.js'
import { recoverCheckout } from '../world/checkout/checkoutJournal.js'
import { scanWorkspace } from '../world/scan/scanWorkspace.js'
import '../util/disposeSymbols.js'
import { withWorkspaceLock } from '../world/workspace/workspaceLock.js'
import { type Base, type FoundBase, advanceBase } from './commit/advanceBase.js'
import { Branch, type BranchOptions } from './Branch.js'
import { pruneBaseDirs } from './mount/baseDir.js'
import { atBranchPath } from './mount/branchPath.js'
import { findState, listStates, readGeneration } from './lifecycle/branchStore.js'
import { cleanupOrphans } from './lifecycle/cleanupOrphans.js'
import { createBranch } from './lifecycle/createBranch.js'
import { branchInfo, liveState } from './lifecycle/liveBranch.js'
import { type RunOptions, type RunResult, runInBranch } from './run/runInBranch.js'
import type { BackendName, BranchInfo } from './types.js'

/** `dir` / `store` locate the store as in every call; when nothing is there, a new `dir/.forkpoint` (or `store`) is made. */
export interface OpenWorkspaceOptions extends StoreLocator {
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
 * Disposing it (`await using ws = ...`) aborts the branches it made that are still live,
 * but not persistent ones.
 * @example
 * await using ws = await Workspace.open({ dir: '.' })
 * await ws.withBranch('attempt', async (b) => { await writeFile(`${b.path}/notes.md`, 'hi') })
 */
export class Workspace implements AsyncDisposable {
  #base: Base | null = null
  /** The base being brought up to date, shared by every branch made meanwhile. */
  #rebasing: { generation: number; done: Promise<Digest> } | null = null
  /** Branches made through this object and not persistent: disposing it aborts those still live. */
  readonly #made = new Set<Branch>()

  private constructor(
    /** The workspace root. */
    readonly dir: string,
    readonly store: Store,
    private readonly options: OpenWorkspaceOptions,
  ) {}

  /**
   * Open the workspace `dir` (default: the current directory) and its store, making the
   * store only when there is none: a store that is there but does not open is an error
   * (StoreNotFoundError), never replaced by a fresh one.
   */
  static async open(options: OpenWorkspaceOptions = {}): Promise<Workspace> {
    // the earlier call Workspace.open(dir) would otherwise silently open the current directory's store
    if (typeof options !== 'object')
      throw new UsageError(`Workspace.open takes { dir, store? }, not ${JSON.stringify(options)}: Workspace.open({ dir: ${JSON.stringify(options)} })`, { value: String(options) })
    const { store, workspace } = await openOrInitStore(options)
    const ws = new Workspace(workspace, store, options)
    await recoverCheckout(ws.store, ws.dir)
    await cleanupOrphans({ store: ws.store, workspace: ws.dir })
    await pruneBaseDirs(ws.store)
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
      // the workspace lock for reading the workspace only: syncing and the base directory come after, as a snapshot's do
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

  /**
   * Make a branch of the workspace; with `tree`, of that tree (an image's world) instead of
   * the workspace as it is. It commits into the workspace all the same, three-way from its base.
   * @throws {BranchExistsError} @throws {BackendUnavailableError}
   */
  async branch(name: string, options: BranchOptions & { tree?: Digest } = {}): Promise<Branch> {
    const tree = options.tree ?? (await this.baseTree())
    const state = await atBranchPath(options.path, this.dir, (path) =>
      createBranch({
        store: this.store,
        name,
        parent: null,
        tree,
        backend: options.backend ?? this.options.backend,
        persistent: options.persistent,
        onHost: options.onHost,
        disk: options.disk,
        ...(path === undefined ? {} : { path }),
      }),
    )
    const branch = new Branch(this, this, state)
    if (!options.persistent) this.#made.add(branch)
    return branch
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
    return Promise.all(states.map(async (s) => branchInfo(this.store, await liveState(this.store, s.id), states)))
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

  /** Abort the branches this object made that are still live (not persistent ones). */
  async [Symbol.asyncDispose](): Promise<void> {
    const made = [...this.#made]
    this.#made.clear()
    await Promise.all(made.map((b) => b.abort()))
  }
}

/** The store `locator` names or finds, made where nothing is (no store found, nothing at the path it names or at `dir/.forkpoint`). */
async function openOrInitStore(locator: StoreLocator): Promise<{ store: Store; workspace: string }> {
  const dir = resolve(locator.dir ?? process.cwd())
  const location = locateStore(locator) ?? { storeDir: join(dir, STORE_DIR_NAME), workspace: dir }
  if (!existsSync(location.storeDir)) await initWorkspace({ dir: location.workspace, store: location.storeDir })
  return { store: locator.store instanceof Store ? locator.store : await Store.open(location.storeDir), workspace: location.workspace }
}
