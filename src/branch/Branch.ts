import '../util/disposeSymbols.js'
import { BranchNotFoundError } from '../errors/index.js'
import { abortBranch } from './lifecycle/abortBranch.js'
import { atBranchPath } from './mount/branchPath.js'
import { commitBranch } from './commit/commitBranch.js'
import { createBranch } from './lifecycle/createBranch.js'
import { branchChanges, liveState, viewPath } from './lifecycle/liveBranch.js'
import type { RunOptions, RunResult } from './run/runInBranch.js'
import type { BackendName, BranchChange, BranchState, CommitHooks, CommitPolicy, CommitResult, ConflictPolicy, InProgressOptions } from './types.js'
import type { Workspace } from './Workspace.js'

export interface BranchOptions {
  /** Backend for this branch (a child always uses its parent's). */
  backend?: BackendName | 'auto'
  /** Keep the branch after this process exits, until commit or abort (the CLI's branches). */
  persistent?: boolean
  /**
   * Mount the branch at this directory (made when missing; empty, outside the workspace)
   * in the host's mount namespace, where every tool sees it. A persistent branch is
   * mounted there anyway when it can be, at the store's `branches/live/<id>/mnt`.
   */
  path?: string
  /**
   * Make the branch a directory of the host's file system that every tool can use, even
   * though it ends with this process (the patterns' unsandboxed candidates): mounted in the
   * host's mount namespace where this process can mount there, else, with the backend left
   * to choose, a clone (reflink, or copy).
   */
  onHost?: boolean
  /**
   * Cap what the branch writes (bytes, or a size like "512M"): its upper layer gets a file
   * system of that size, so a write past it fails with ENOSPC. Overlay backend, as root,
   * mounted on the host (persistent, or with `path`); refused elsewhere (BackendUnavailableError).
   */
  disk?: number | string
  /** For `withBranch`: how its commit treats a parent that changed meanwhile. */
  onConflict?: ConflictPolicy
}

/**
 * An isolated, writable, copy-on-write view of its parent (the workspace, or another
 * branch) at `path`, a real directory any process can use. `await using` aborts it
 * unless it was committed.
 */
export class Branch implements AsyncDisposable {
  #state: BranchState
  #status: 'live' | 'committed' | 'aborted' = 'live'
  /** The commit under way or done, so that ending the branch again is a no-op. */
  #commit: Promise<CommitResult> | null = null
  #abort: Promise<void> | null = null

  constructor(
    readonly workspace: Workspace,
    /** Where `commit` applies the changes: the workspace, or the branch this one was made from. */
    readonly parent: Workspace | Branch,
    state: BranchState,
  ) {
    this.#state = state
  }

  /** Full name: `attempt`, or `attempt/variant` for a branch of a branch. */
  get name(): string {
    return this.#state.name
  }

  get id(): string {
    return this.#state.id
  }

  get backend(): BackendName {
    return this.#state.backend
  }

  /**
   * The branch's directory. A persistent branch (or one given a `path`) is mounted in the
   * host's mount namespace where that can be done, a directory every tool can use; otherwise
   * it is `/proc/<pid>/root/...` of a namespace holder, fine for this process's file calls,
   * but git and node resolve it to an empty directory: use `run` there (docs/branch-paths.md).
   */
  get path(): string {
    return viewPath(this.workspace.store, this.#state)
  }

  get status(): 'live' | 'committed' | 'aborted' {
    return this.#status
  }

  /**
   * Apply the changes to the parent and end the branch. Once committed, it gives the
   * same result again.
   * @param options see `CommitPolicy`: conflicts, symlinks leading out, git files the branch wrote
   * @param options.stopOnConflict into the workspace: leave conflicts marked there with the commit in progress (`resume` finishes it, `abortCommit` undoes it)
   * @param options.beforeApply runs when the commit is sure to go in, before the first file is put in place
   * @throws {ConflictError} @throws {BranchStaleError} @throws {BranchBusyError} live children
   * @throws {BranchNotFoundError} it was aborted: its changes are gone
   * @throws {UnsafePathError} a symlink leading out @throws {UnsupportedFileError} a FIFO, socket or device
   */
  commit(options: CommitPolicy & InProgressOptions & CommitHooks = {}): Promise<CommitResult> {
    this.#commit ??= this.#commitOnce(options)
    return this.#commit
  }

  async #commitOnce(options: CommitPolicy & InProgressOptions & CommitHooks): Promise<CommitResult> {
    if (this.#status === 'aborted') throw new BranchNotFoundError(`branch ${this.name} was aborted: nothing to commit`, { name: this.name })
    try {
      const result = await commitBranch({ store: this.workspace.store, workspace: this.workspace.dir, id: this.id, ...options })
      this.#status = 'committed'
      return result
    } catch (err) {
      this.#commit = null // still live (a conflict, a busy child): it may be committed again or aborted
      throw err
    }
  }

  /** Throw the branch away (and its children), leaving nothing behind. Does nothing once it has ended. */
  abort(): Promise<void> {
    this.#abort ??= this.#abortOnce()
    return this.#abort
  }

  async #abortOnce(): Promise<void> {
    if (this.#status !== 'live') return
    try {
      await abortBranch({ store: this.workspace.store, id: this.id })
      this.#status = 'aborted'
    } catch (err) {
      this.#abort = null
      throw err
    }
  }

  /** A branch of this branch: it starts from this one as it is now and commits into it. */
  async branch(name: string, options: BranchOptions = {}): Promise<Branch> {
    const state = await atBranchPath(options.path, this.workspace.dir, (path) =>
      createBranch({
        store: this.workspace.store,
        name,
        parent: this.id,
        backend: options.backend,
        persistent: options.persistent,
        onHost: options.onHost,
        disk: options.disk,
        ...(path === undefined ? {} : { path }),
      }),
    )
    return new Branch(this.workspace, this, state)
  }

  /** What the branch changed so far, against the base it started from. */
  async changes(): Promise<BranchChange[]> {
    this.#state = await liveState(this.workspace.store, this.id)
    return branchChanges(this.workspace.store, this.#state)
  }

  /** `workspace.run` inside this branch. */
  run(cmd: string | string[], options: RunOptions = {}): Promise<RunResult> {
    return this.workspace.run(cmd, { ...options, branch: this })
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.abort()
  }
}
