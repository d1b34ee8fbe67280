import { setMaxListeners } from 'node:events'
import type { Branch } from '../branch/Branch.js'
import type { HttpPolicy } from '../effects/httpPolicy.js'
import type { Digest } from '../objects/digest.js'
import type { BranchPool } from './BranchPool.js'
import { mapLimit } from './mapLimit.js'
import type { ResolvedOptions } from './patternOptions.js'
import { type Verdict, runCandidate } from './runCandidate.js'
import type { Candidate, CandidateResult, CandidateStatus, Target } from './types.js'

/** One candidate to run: what, where its branch comes from, and where it sits in a search. */
export interface CandidateSpec {
  index: number
  candidate: Candidate
  /** The target, or a branch of the pool (tree searches). */
  parent: Target
  depth?: number
  parentResult?: CandidateResult
  feedback?: string
  /** Make its branch from this tree (an image's world) instead of its parent as it is now; the parent must be a workspace. */
  tree?: Digest
  /** The HTTP effects policy its command runs under (default: the store's policy file); a fan-out worker gets the submitter's. */
  httpPolicy?: HttpPolicy | null
}

/** A finished candidate; `branch` is still live only when `keep` said so. */
export interface Attempt {
  result: CandidateResult
  branch: Branch | null
}

/** Scores a successful candidate's work (tree searches); runs inside its deadline. */
export type Evaluate = (path: string, result: CandidateResult) => number | Promise<number>

export interface RunCandidatesArgs {
  pool: BranchPool
  specs: CandidateSpec[]
  options: ResolvedOptions
  /** Cancels every candidate (the pattern's own signal). */
  signal?: AbortSignal
  /** The first success cancels the rest: running ones get their signal (sandboxes killed), queued ones never start. */
  firstWins?: boolean
  /** Which finished candidates keep their branch for the caller (default: successes); the others are aborted at once. */
  keep?: (result: CandidateResult) => boolean
  /** The caller uses only the best kept success (by score, then index): a runner whose results travel (`queueRunner`) brings back that one alone. */
  bestOnly?: boolean
  evaluate?: Evaluate
}

/** Runs a pattern's candidates somewhere else than in this process, as `runCandidates` does here: fan-out's `queueRunner`. */
export type CandidateRunner = (args: RunCandidatesArgs) => Promise<Attempt[]>

/**
 * How long a cancelled function candidate gets to end (its child processes with it) before
 * it is abandoned: a function that ignores its signal cannot be stopped from outside. Its
 * branch is aborted once no command runs in it (never torn down under one: BranchPool). A
 * command candidate is always waited for: its runner settles only once its whole process
 * tree is gone.
 */
const FUNCTION_GRACE_MS = 2000

/**
 * The shared candidate runner: at most `maxParallel` at once, each in a fresh branch, each
 * with a real wall-clock deadline. An exception is a failed result; a candidate that
 * outlives its deadline or cancellation is reported as such and never kept, whatever it
 * returns later. Results come back in spec order whatever finished first.
 */
export async function runCandidates({ pool, specs, options, signal, firstWins = false, keep = (r) => r.success, evaluate }: RunCandidatesArgs): Promise<Attempt[]> {
  const stop = new AbortController()
  setMaxListeners(specs.length + 10, stop.signal) // one listener per running candidate
  const forward = () => stop.abort(new DOMException('the pattern was cancelled', 'AbortError'))
  if (signal?.aborted) forward()
  signal?.addEventListener('abort', forward, { once: true })
  try {
    return await mapLimit(specs, options.maxParallel, runOne)
  } finally {
    signal?.removeEventListener('abort', forward)
  }

  async function runOne(spec: CandidateSpec): Promise<Attempt> {
    const started = performance.now()
    const base = {
      index: spec.index,
      ...(spec.depth === undefined ? {} : { depth: spec.depth }),
      ...(spec.parentResult ? { parent: spec.parentResult.index } : {}),
      ...(spec.feedback === undefined ? {} : { feedback: spec.feedback }),
    }
    const finish = (branch: Branch | null, status: CandidateStatus, fields: Partial<CandidateResult> = {}): CandidateResult => ({
      ...base,
      status,
      success: status === 'succeeded',
      score: null,
      branch: branch?.name ?? null,
      branchPath: branch?.path ?? null,
      durationMs: performance.now() - started,
      ...fields,
    })
    if (stop.signal.aborted) return { result: finish(null, 'cancelled', { error: reasonOf(stop.signal) }), branch: null }
    let branch: Branch
    try {
      branch = await pool.create(spec.parent, spec.index, spec.tree)
    } catch (err) {
      return { result: finish(null, 'error', { error: `cannot make its branch: ${messageOf(err)}` }), branch: null }
    }
    if (stop.signal.aborted) {
      await pool.abort(branch) // the race was decided while its branch was being made
      return { result: finish(null, 'cancelled', { error: reasonOf(stop.signal) }), branch: null }
    }
    const result = await within(branch, finish)
    if (firstWins && result.success) {
      if (stop.signal.aborted) Object.assign(result, { status: 'cancelled', success: false, error: reasonOf(stop.signal) })
      else stop.abort(new DOMException(`cancelled: candidate ${spec.index} won`, 'AbortError'))
    }
    if (keep(result)) return { result, branch }
    await pool.abort(branch)
    return { result, branch: null }

    async function within(branch: Branch, finish: (b: Branch, s: CandidateStatus, f?: Partial<CandidateResult>) => CandidateResult): Promise<CandidateResult> {
      const own = new AbortController()
      const cancel = () => own.abort(stop.signal.reason)
      stop.signal.addEventListener('abort', cancel, { once: true })
      if (stop.signal.aborted) cancel()
      const timer =
        options.timeoutMs === null ? undefined : setTimeout(() => own.abort(new DOMException(`timed out after ${options.timeoutMs} ms`, 'TimeoutError')), options.timeoutMs)
      const body = settle(work(branch, own.signal))
      const ended = await Promise.race([body, aborted(own.signal)])
      clearTimeout(timer)
      stop.signal.removeEventListener('abort', cancel)
      if (ended === 'aborted' || own.signal.aborted) {
        await (typeof spec.candidate === 'function' ? Promise.race([body, delay(FUNCTION_GRACE_MS)]) : body)
        const timedOut = (own.signal.reason as DOMException | undefined)?.name === 'TimeoutError'
        return finish(branch, timedOut ? 'timeout' : 'cancelled', { error: reasonOf(own.signal) })
      }
      if ('error' in ended) return finish(branch, 'error', { error: messageOf(ended.error) })
      const { success, score, value } = ended.verdict
      return finish(branch, success ? 'succeeded' : 'failed', { score, ...(value === undefined ? {} : { value }) })
    }

    async function work(branch: Branch, signal: AbortSignal): Promise<Verdict> {
      const effects = pool.effectsOf(branch)
      const context = {
        branch,
        depth: spec.depth ?? 1,
        ...(spec.feedback === undefined ? {} : { feedback: spec.feedback }),
        ...(spec.parentResult ? { parent: spec.parentResult } : {}),
        ...(effects ? { effects } : {}),
      }
      const verdict = await runCandidate(spec.candidate, {
        branch,
        index: spec.index,
        signal,
        context,
        isolate: options.isolate,
        env: options.env,
        ...(spec.httpPolicy === undefined ? {} : { httpPolicy: spec.httpPolicy }),
      })
      if (!evaluate || !verdict.success) return verdict
      const provisional = finish(branch, 'succeeded', { score: verdict.score, ...(verdict.value === undefined ? {} : { value: verdict.value }) })
      const score = await evaluate(branch.path, provisional)
      if (typeof score !== 'number' || !Number.isFinite(score)) throw new TypeError(`evaluate must return a finite number, not ${String(score)}`)
      return { ...verdict, score }
    }
  }
}

type Settled = { verdict: Verdict } | { error: unknown }

/** Never rejects, so an abandoned candidate cannot raise an unhandled rejection. */
function settle(p: Promise<Verdict>): Promise<Settled> {
  return p.then(
    (verdict) => ({ verdict }),
    (error: unknown) => ({ error }),
  )
}

function aborted(signal: AbortSignal): Promise<'aborted'> {
  return new Promise((resolve) => (signal.aborted ? resolve('aborted') : signal.addEventListener('abort', () => resolve('aborted'), { once: true })))
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function reasonOf(signal: AbortSignal): string {
  return messageOf(signal.reason)
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
