import type { Digest } from '../objects/digest.js'
import { acquireLock, breakIfStale, type Lock, tryCreateLock } from '../store/lockFile.js'
import { deleteRef, readRef, updateRef } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import { readSnapshot } from '../world/tree/readObjects.js'

/** Whose ledger: the workspace's (the image the next snapshot takes), or a live branch's (its outbox). */
export type EffectsContext = { kind: 'workspace' } | { kind: 'branch'; id: string; /** For messages. */ name?: string }

export const WORKSPACE_CONTEXT: EffectsContext = { kind: 'workspace' }

/**
 * The ref that holds a context's ledger: `refs/effects/workspace` or
 * `refs/effects/branches/<branch id>`. A ref (not a file beside the branch) so the ledger
 * survives any process, gc keeps its objects, and each move is logged.
 */
export function contextRef(context: EffectsContext): string {
  return context.kind === 'workspace' ? 'refs/effects/workspace' : `refs/effects/branches/${context.id}`
}

/**
 * The ledger a context continues: its own ref; else, for a branch, the workspace's (a
 * branch sees what was executed before it was made), and for the workspace, HEAD's
 * `effects` layer. Null when there is none yet.
 */
export async function contextLedger(store: Store, context: EffectsContext): Promise<Digest | null> {
  const own = await readRef(store, contextRef(context))
  if (own || context.kind === 'branch') return own ?? contextLedger(store, WORKSPACE_CONTEXT)
  const head = await readRef(store, 'HEAD')
  return head ? ((await readSnapshot(store, head)).effects ?? null) : null
}

export async function saveContextLedger(store: Store, context: EffectsContext, ledger: Digest, message: string): Promise<void> {
  await updateRef({ store, name: contextRef(context), id: ledger, message })
}

export async function forgetContextLedger(store: Store, context: EffectsContext): Promise<void> {
  await deleteRef(store, contextRef(context))
}

/**
 * One commit, drop or send of an outbox at a time per store, across processes: a key must be
 * sent once. `wait: false`: null at once when a live process holds the lock (it is sending).
 */
export async function withOutboxLock<T>(store: Store, work: () => Promise<T>): Promise<T>
export async function withOutboxLock<T>(store: Store, work: () => Promise<T>, options: { wait: boolean }): Promise<T | null>
export async function withOutboxLock<T>(store: Store, work: () => Promise<T>, { wait = true } = {}): Promise<T | null> {
  const path = store.path('locks', 'effects-outbox.lock')
  const lock = wait ? await acquireLock(path, { what: 'the effects outbox', timeoutMs: 120_000 }) : await tryOnce(path)
  if (!lock) return null
  try {
    return await work()
  } finally {
    await lock.release()
  }
}

async function tryOnce(path: string): Promise<Lock | null> {
  return (await tryCreateLock(path)) ?? ((await breakIfStale(path)) ? tryCreateLock(path) : null)
}
