import type { Workspace } from '../branch/Workspace.js'
import { branchTree } from '../branch/lifecycle/branchTree.js'
import type { Branch } from '../branch/Branch.js'
import { contextRef } from '../effects/contextLedger.js'
import { pendingEntries } from '../effects/ledgerState.js'
import { verifyLedger } from '../effects/verifyLedger.js'
import { WorkerRegistryError } from '../errors/index.js'
import { BranchPool } from '../patterns/BranchPool.js'
import { resolveOptions } from '../patterns/patternOptions.js'
import { messageOf, runCandidates } from '../patterns/runCandidates.js'
import type { CommandValue } from '../patterns/runCandidate.js'
import { pullImage } from '../registry/transfer/pullImage.js'
import { parseRemote } from '../registry/transport/parseRemote.js'
import { pushImage } from '../registry/transfer/pushImage.js'
import type { Digest } from '../objects/digest.js'
import { readRef } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import type { Snapshot } from '../objects/Snapshot.js'
import type { FanoutJobData, FanoutJobProgress, FanoutJobResult } from './FanoutJob.js'

/** What a worker runs its jobs with. */
export interface JobContext {
  workspace: Workspace
  worker: string
  /** The registry this worker serves, and whether plain HTTP to it is allowed off loopback. */
  registry: string
  insecure: boolean
  /** Base images being pulled now, so that jobs of one base pull it once. */
  pulls: Map<Digest, Promise<void>>
  /** The worker's environment, as a pattern's `env`: what candidates start with, where FORKPOINT_KEY is read from. */
  env: NodeJS.ProcessEnv | undefined
  /** Tell the submitter the job's phase; not waited for (the queue keeps a connection's commands in order, so the phases still arrive before the result). */
  report(progress: FanoutJobProgress): void
}

/**
 * One job on a worker: the base image pulled unless the worker's store has it (only the
 * packs it lacks travel), a copy-on-write branch of its world, the candidate run there as
 * `runCandidates` runs any (sandboxed, its deadline, its score command, its HTTP through an
 * effects proxy whose irreversible requests wait in the branch's outbox), then a success's
 * files and outbox as an image pushed untagged (by its digest). The image's `createdAt` is the
 * job's, so a job run again (its worker lost) makes the identical image. The branch is
 * aborted whatever happens; its outbox is never sent here.
 * @throws {WorkerRegistryError} the registry cannot be reached (the job fails, naming it)
 */
export async function runJob(data: FanoutJobData, ctx: JobContext, signal: AbortSignal): Promise<FanoutJobResult> {
  const started = performance.now()
  const { store } = ctx.workspace
  if (data.registry !== ctx.registry)
    throw new WorkerRegistryError(`worker ${ctx.worker} serves the registry ${ctx.registry}, and this job names ${data.registry}: refusing it`, {
      registry: data.registry,
      worker: ctx.worker,
    })
  ctx.report({ phase: 'pulling', worker: ctx.worker })
  await ensureBase(data, ctx)
  const base = await readSnapshot(store, data.base.id)
  const options = resolveOptions({ maxParallel: 1, isolate: data.isolate, ...(data.timeoutMs === null ? {} : { timeout: data.timeoutMs }), ...(ctx.env ? { env: ctx.env } : {}) })
  const pool = new BranchPool(ctx.workspace, 'fanout', undefined, { onHost: !data.isolate, env: options.env })
  try {
    ctx.report({ phase: 'running', worker: ctx.worker })
    const [attempt] = await runCandidates({
      pool,
      specs: [{ index: data.index, candidate: data.candidate, parent: ctx.workspace, tree: base.world.tree, httpPolicy: data.httpPolicy }],
      options,
      signal,
      keep: (r) => r.success,
    })
    const { result, branch } = attempt!
    const report = {
      status: result.status,
      score: result.score,
      ...(result.value === undefined ? {} : { value: result.value as CommandValue }),
      ...(result.error === undefined ? {} : { error: result.status === 'cancelled' && signal.aborted ? messageOf(signal.reason) : result.error }),
      worker: ctx.worker,
    }
    if (!branch || signal.aborted) return { ...report, image: null, deferred: 0, durationMs: performance.now() - started }
    ctx.report({ phase: 'pushing', worker: ctx.worker })
    const { image, deferred } = await pushResult(data, ctx, base, branch, options.env)
    return { ...report, image, deferred, durationMs: performance.now() - started }
  } finally {
    await pool.close()
  }
}

/** Pull the base image unless the store has it already (a snapshot is stored only once all it reaches is). */
async function ensureBase(data: FanoutJobData, ctx: JobContext): Promise<void> {
  const store = ctx.workspace.store
  if (await store.has(data.base.id)) return
  let pull = ctx.pulls.get(data.base.id)
  if (!pull) {
    pull = viaRegistry(ctx, 'pull the base image from', () =>
      pullImage({ store, remote: data.base.remote, tag: `fanout-base-${data.base.id.slice(7, 23)}`, insecure: ctx.insecure }),
    ).then(() => undefined)
    ctx.pulls.set(data.base.id, pull)
    pull.finally(() => ctx.pulls.delete(data.base.id)).catch(() => undefined)
  }
  await pull
}

/** The branch's files and outbox as the job's image: parent the base, `createdAt` the job's; pushed untagged, so a repository's tags do not grow by one a job. */
async function pushResult(data: FanoutJobData, ctx: JobContext, base: Snapshot, branch: Branch, env: NodeJS.ProcessEnv): Promise<Pick<FanoutJobResult, 'image' | 'deferred'>> {
  const store = ctx.workspace.store
  const tree = await branchTree(store, branch, false)
  const outbox = await readRef(store, contextRef({ kind: 'branch', id: branch.id }))
  const deferred = outbox ? await countDeferred(store, outbox, env) : 0
  const { effects: baseEffects, ...rest } = base
  const effects = outbox ?? baseEffects
  const snapshot: Snapshot = {
    ...rest,
    parents: [data.base.id],
    world: { ...base.world, tree },
    ...(effects ? { effects } : {}),
    meta: { message: `fan-out ${data.group}: candidate ${data.index}`, createdAt: data.createdAt },
  }
  const id = await store.writeObject(snapshot)
  const pushed = await viaRegistry(ctx, 'push the result to', () =>
    pushImage({ store, id, remote: data.registry, untagged: true, from: baseManifest(data), insecure: ctx.insecure }),
  )
  return { image: { id, manifest: pushed.manifest }, deferred }
}

/** What the result's push continues: the base as the worker pulled it (by its manifest digest), so only the new snapshot and what changed are walked and sent. */
function baseManifest(data: FanoutJobData): string | undefined {
  const { reference } = parseRemote(data.base.remote)
  return reference === null ? undefined : 'digest' in reference ? reference.digest : reference.tag
}

async function countDeferred(store: Store, ledger: Digest, env: NodeJS.ProcessEnv): Promise<number> {
  return pendingEntries((await verifyLedger({ store, ledger, env })).entries).length
}

/** A registry call whose failure names the worker and the registry. */
async function viaRegistry<T>({ worker, registry }: JobContext, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    throw new WorkerRegistryError(`worker ${worker} could not ${what} the registry ${registry}: ${messageOf(err)}`, { registry, worker }, { cause: err })
  }
}
