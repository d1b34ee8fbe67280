import { randomBytes } from 'node:crypto'
import { Branch } from '../branch/Branch.js'
import type { CommitResult, ConflictPolicy } from '../branch/types.js'
import type { Workspace } from '../branch/Workspace.js'
import type { Target } from './types.js'

/**
 * Every branch one pattern run makes, so that each one ends committed or aborted: `close`
 * (called in a `finally`) aborts whatever is still live, whatever happened.
 */
export class BranchPool {
  readonly #live = new Set<Branch>()
  readonly #prefix: string

  constructor(readonly target: Target, pattern: string) {
    this.#prefix = `${pattern.toLowerCase()}-${randomBytes(3).toString('hex')}`
  }

  get workspace(): Workspace {
    return this.target instanceof Branch ? this.target.workspace : this.target
  }

  /**
   * A new branch of `parent` (the target, or a branch of this pool) for candidate `index`.
   * Branches made at once share the workspace's base update and queue only for the
   * moment of registering under the creation lock; their mounts are made in parallel.
   */
  async create(parent: Target, index: number): Promise<Branch> {
    const branch = await parent.branch(`${this.#prefix}-${index}`)
    this.#live.add(branch)
    return branch
  }

  async abort(branch: Branch): Promise<void> {
    this.#live.delete(branch)
    await branch.abort()
  }

  /**
   * Commit `leaf` into its parent, that one into its own, and so on up to the target; every
   * other branch of the pool is aborted first (a branch with live children cannot commit).
   */
  async commitChain(leaf: Branch, onConflict: ConflictPolicy): Promise<CommitResult> {
    const chain: Branch[] = []
    for (let b: Target = leaf; b !== this.target && b instanceof Branch; b = b.parent) chain.push(b)
    await this.abortAll((b) => !chain.includes(b))
    let result: CommitResult | undefined
    for (const branch of chain) {
      result = await branch.commit({ onConflict }) // a failed commit leaves it live, for close() to abort
      this.#live.delete(branch)
    }
    return result!
  }

  /** Abort every live branch, whatever happened; tries them all before reporting the first failure. */
  async close(): Promise<void> {
    await this.abortAll(() => true)
  }

  /**
   * Abort the chosen branches at once: only the topmost of them explicitly, since aborting
   * a branch tears its children down with it.
   */
  private async abortAll(which: (b: Branch) => boolean): Promise<void> {
    const chosen = [...this.#live].filter(which)
    const tops = chosen.filter((b) => !(b.parent instanceof Branch && chosen.includes(b.parent)))
    for (const b of chosen) this.#live.delete(b)
    const failed = (await Promise.allSettled(tops.map((b) => b.abort()))).find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
  }
}
