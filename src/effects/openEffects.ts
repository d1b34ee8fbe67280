import { UsageError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { ChainHasher } from './ChainHasher.js'
import { emptyLedger } from './chain.js'
import { Effects } from './Effects.js'
import type { EffectsMode } from './types.js'
import { verifyLedger } from './verifyLedger.js'

/** `dir` / `store`: the store holding the ledger and its objects (the API's one locator). */
export interface OpenEffectsArgs extends StoreLocator {
  /** Continue this ledger (verified first); without it the ledger starts empty. */
  ledger?: Digest
  /** `speculative` inside a branch or a pattern candidate: irreversible calls wait for `commit()`. @default 'direct' */
  mode?: EffectsMode
  /** Where FORKPOINT_KEY is read from: when set, the chain is HMAC-SHA256. The caller's environment (`process.env` at its edge). */
  env: NodeJS.ProcessEnv
  /** The clock entries are stamped with (merges order by it). @default () => new Date() */
  now?: () => Date
}

/**
 * Open an effects ledger for recording tool calls.
 * @returns a handle: `tool()`, `pending()`, `commit()`, `drop()`, `fork()`, `ledger()`
 * @throws {LedgerTamperedError} (exit 5) `ledger` fails verification
 * @throws {StoreNotFoundError} no store given or found from `dir`
 * @example
 * const effects = await openEffects({ store, mode: 'speculative' })
 * const send = effects.tool('email.send', sendEmail, { class: 'irreversible', key: (m) => m.messageId })
 * await send({ messageId: 'm-1', to: 'a@example.com' }) // deferred: { deferred: true, … }
 * await effects.commit() // sends it, once
 */
export async function openEffects({ ledger, mode = 'direct', env, now = () => new Date(), ...locator }: OpenEffectsArgs): Promise<Effects> {
  if (mode !== 'direct' && mode !== 'speculative') throw new UsageError(`effects mode must be 'direct' or 'speculative', not ${String(mode)}`)
  const { store: theStore } = await openStore(locator)
  const start = ledger ? await verifyLedger({ store: theStore, ledger, env }) : null
  const hasher = start ? ChainHasher.forLedger(start.chain, env, `ledger ${ledger}`) : ChainHasher.fromEnv(env)
  return new Effects({ store: theStore, ledger: start ?? emptyLedger(hasher), hasher, mode, now, tools: new Map(), parent: null })
}
