import { listStates } from '../branch/lifecycle/branchStore.js'
import { MalformedObjectError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { resolveId } from '../store/resolveId.js'
import type { Store } from '../store/Store.js'
import { type EffectsContext, WORKSPACE_CONTEXT, contextLedger } from './contextLedger.js'
import type { LedgerEntry } from '../objects/Ledger.js'
import { pendingEntries, uncertainEntries } from './ledgerState.js'
import { verifyLedger } from './verifyLedger.js'
import { openStore, type StoreLocator } from '../store/findStore.js'

export interface ListEffectsArgs extends StoreLocator {
  /** A live branch's name, an image (snapshot id, ref, prefix) or a ledger id. Default: the workspace's ledger (HEAD's `effects` layer until a request is recorded). */
  id?: string
  /** Only the outbox: deferred effects neither sent nor dropped. */
  pending?: boolean
  /** Only effects sent again after an attempt whose outcome was unknown: a service ignoring Idempotency-Key may have had them twice. */
  uncertain?: boolean
  /** Where FORKPOINT_KEY is read from, to verify the ledger: the caller's environment, passed down from its edge. */
  env: NodeJS.ProcessEnv
}

export interface EffectsListing {
  /** What was listed: `workspace`, `branch NAME`, or `image <id>` / `ledger <id>`. */
  source: string
  /** The ledger object, or null when there is none yet. */
  ledger: Digest | null
  entries: LedgerEntry[]
}

/**
 * The ledger of an image, a branch or the workspace, verified (`forkpoint effects [ID]`),
 * or only its outbox (`--pending`), or only the effects resent after a crash (`--uncertain`).
 * @throws {LedgerTamperedError} (exit 5) the ledger fails verification
 * @throws {MalformedObjectError} (exit 5) ID names an object that is neither an image nor a ledger
 * @throws {ObjectNotFoundError} ID names nothing
 */
export async function listEffects({ store, dir, id, pending = false, uncertain = false, env }: ListEffectsArgs): Promise<EffectsListing> {
  const { store: theStore } = await openStore({ ...(dir ? { dir } : {}), ...(store ? { store } : {}) })
  const { source, ledger } = await locate(theStore, id)
  const entries = ledger ? (await verifyLedger({ store: theStore, ledger, env })).entries : []
  return { source, ledger, entries: pending ? pendingEntries(entries) : uncertain ? uncertainEntries(entries) : [...entries] }
}

async function locate(store: Store, id: string | undefined): Promise<{ source: string; ledger: Digest | null }> {
  if (id === undefined) return { source: 'workspace', ledger: await contextLedger(store, WORKSPACE_CONTEXT) }
  const branch = (await listStates(store)).find((s) => s.name === id)
  if (branch) {
    const context: EffectsContext = { kind: 'branch', id: branch.id }
    return { source: `branch ${id}`, ledger: await contextLedger(store, context) }
  }
  const digest = await resolveId(store, id)
  const object = await store.readObject(digest)
  if (object.kind === 'ledger') return { source: `ledger ${digest}`, ledger: digest }
  if (object.kind === 'snapshot') return { source: `image ${digest}`, ledger: (object as { effects?: Digest }).effects ?? null }
  throw new MalformedObjectError(`${id} names ${digest}, a ${object.kind} object: give an image, a ledger or a live branch`, {
    digest,
    expected: 'snapshot or ledger',
    actual: object.kind,
  })
}
