import { randomBytes } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { Branch } from '../branch/Branch.js'
import type { ConflictPolicy } from '../branch/types.js'
import type { Workspace } from '../branch/Workspace.js'
import { abortWithEffects, type CommitWithEffectsResult, commitWithEffects } from '../effects/branchEffects.js'
import type { Effects } from '../effects/Effects.js'
import { BranchBusyError, InternalError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import type { Target } from './types.js'

/**
 * Every branch one pattern run makes, so that each one ends committed or aborted: `close`
 * (called in a `finally`) aborts whatever is still live, whatever happened.
 */
export class BranchPool {
  readonly #live = new Set<Branch>()
  readonly #prefix: string
  /** Each branch's effects handle, forked from its parent's (or the pattern's `effects`): committed with the branch, dropped with it. */
  readonly #effects = new Map<Branch, Effects>()

  /** Every branch a directory of the host's file system (`BranchOptions.onHost`): unsandboxed candidates work in them. */
  readonly #onHost: boolean
  /** Where FORKPOINT_KEY is read from, for the outboxes' ledgers. */
  readonly #env: NodeJS.ProcessEnv

  constructor(
    readonly target: Target,
    pattern: string,
    private readonly effects: Effects | undefined,
    { onHost = false, env }: { onHost?: boolean; env: NodeJS.ProcessEnv },
  ) {
    this.#prefix = `${pattern.toLowerCase()}-${randomBytes(3).toString('hex')}`
    this.#onHost = onHost
    this.#env = env
  }

  /** The effects handle of a branch of this pool (when the pattern was given `effects`). */
  effectsOf(branch: Branch): Effects | undefined {
    return this.#effects.get(branch)
  }

  get workspace(): Workspace {
    return this.target instanceof Branch ? this.target.workspace : this.target
  }

  /**
   * A new branch of `parent` (the target, or a branch of this pool) for candidate `index`;
   * with `tree`, of that tree (an image's world) instead of the parent as it is now.
   * Branches made at once share the workspace's base update and queue only for the
   * moment of registering under the creation lock; their mounts are made in parallel.
   */
  async create(parent: Target, index: number, tree?: Digest): Promise<Branch> {
    const name = `${this.#prefix}-${index}`
    if (tree !== undefined && parent instanceof Branch) throw new InternalError(`a branch of a tree is made from a workspace, not from branch ${parent.name}`)
    const onHost = this.#onHost
    const branch = tree === undefined || parent instanceof Branch ? await parent.branch(name, { onHost }) : await parent.branch(name, { tree, onHost })
    this.#live.add(branch)
    const above = parent instanceof Branch ? this.#effects.get(parent) : this.effects
    if (above) this.#effects.set(branch, above.fork())
    return branch
  }

  /** Abort a branch: its deferred effects (HTTP outbox and handle) are dropped, never run. */
  async abort(branch: Branch): Promise<void> {
    this.#live.delete(branch)
    await this.#drop(branch)
  }

  /**
   * Commit `leaf` into its parent, that one into its own, and so on up to the target; every
   * other branch of the pool is aborted first (a branch with live children cannot commit).
   * Each commit takes the branch's deferred effects along: up into its parent, and run, once,
   * when the chain reaches a target that is not speculative.
   */
  async commitChain(leaf: Branch, onConflict: ConflictPolicy): Promise<CommitWithEffectsResult> {
    const chain: Branch[] = []
    for (let b: Target = leaf; b !== this.target && b instanceof Branch; b = b.parent) chain.push(b)
    await this.abortAll((b) => !chain.includes(b))
    let result: CommitWithEffectsResult | undefined
    for (const branch of chain) {
      result = await commitWithEffects(branch, { onConflict, env: this.#env }) // a failed commit leaves it live, for close() to abort
      this.#live.delete(branch)
      await this.#effects.get(branch)?.commit()
      this.#effects.delete(branch)
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
    const failed = (await Promise.allSettled(tops.map((b) => this.#drop(b, chosen)))).find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
  }

  /**
   * Abort `branch` (and its children) and drop their deferred effects; `also`: handles of other branches torn down with it.
   * A branch a command still runs in (a function candidate that ignored its signal left one going) is never torn down
   * under it: it is aborted once that command ends, without holding the pattern up.
   */
  async #drop(branch: Branch, also: Branch[] = []): Promise<void> {
    try {
      await abortWithEffects(branch, { env: this.#env })
    } catch (err) {
      if (!(err instanceof BranchBusyError && err.data.runs > 0)) throw err
      abortWhenIdle(branch, this.#env).catch((later: unknown) => process.emitWarning(`could not abort branch ${branch.name} once its command ended: ${String(later)}`))
    }
    for (const b of [branch, ...also.filter((c) => isBelow(c, branch))]) {
      await this.#effects.get(b)?.drop()
      this.#effects.delete(b)
    }
  }
}

function isBelow(child: Branch, ancestor: Branch): boolean {
  for (let p: Target = child.parent; p instanceof Branch; p = p.parent) if (p === ancestor) return true
  return false
}

/** Abort `branch` once no command runs in it any more, polling. */
async function abortWhenIdle(branch: Branch, env: NodeJS.ProcessEnv): Promise<void> {
  for (let wait = 50; ; wait = Math.min(wait * 2, 2000)) {
    await delay(wait)
    try {
      await abortWithEffects(branch, { env })
      return
    } catch (err) {
      if (!(err instanceof BranchBusyError && err.data.runs > 0)) throw err
    }
  }
}
