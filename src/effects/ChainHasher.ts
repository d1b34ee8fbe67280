import { createHash, createHmac, hkdfSync } from 'node:crypto'
import { EncryptionKeyError, LedgerTamperedError } from '../errors/index.js'
import { PayloadCipher } from '../trace/redact/payloadCipher.js'
import type { ChainInfo } from '../objects/Ledger.js'

const SUBKEY_INFO = 'forkpoint effects ledger chain v1'
const KEY_CHECK_LABEL = 'forkpoint effects ledger key check v1'

/**
 * The hash that links a ledger's entries: plain SHA-256, or HMAC-SHA256 under a key derived
 * from `FORKPOINT_KEY`. The key is read as the trace layer reads it (64 hex, base64 of 32
 * bytes, or a passphrase stretched with scrypt), then HKDF gives the ledger its own subkey,
 * so the HMAC never shares a key with payload encryption.
 */
export class ChainHasher {
  readonly info: ChainInfo
  private readonly key: Buffer | null

  private constructor(info: ChainInfo, key: Buffer | null) {
    this.info = info
    this.key = key
  }

  /** Keyed when FORKPOINT_KEY is set, plain SHA-256 otherwise: what a new ledger is chained with. */
  static fromEnv(env: NodeJS.ProcessEnv): ChainHasher {
    const material = env['FORKPOINT_KEY']
    if (!material) return new ChainHasher({ alg: 'sha256' }, null)
    const key = Buffer.from(hkdfSync('sha256', PayloadCipher.fromMaterial(material).key, Buffer.alloc(0), SUBKEY_INFO, 32))
    return new ChainHasher({ alg: 'hmac-sha256', keyCheck: keyCheck(key) }, key)
  }

  /**
   * The hasher that verifies (and extends) a ledger chained as `info`. With a key set, an
   * unkeyed ledger is refused: re-chaining with plain SHA-256 is how a forger would strip the HMAC.
   */
  static forLedger(info: ChainInfo, env: NodeJS.ProcessEnv, where: string): ChainHasher {
    const current = ChainHasher.fromEnv(env)
    if (info.alg === 'sha256') {
      if (current.info.alg === 'sha256') return current
      throw new LedgerTamperedError(`${where} has an unkeyed chain but FORKPOINT_KEY is set: refusing a ledger whose HMAC may have been stripped`, {
        ledger: where,
        reason: 'unkeyed',
      })
    }
    if (current.info.alg === 'sha256') throw new EncryptionKeyError(`${where} is HMAC-chained: set FORKPOINT_KEY to the key it was written with`)
    if (current.info.keyCheck !== info.keyCheck) {
      throw new LedgerTamperedError(`${where}: FORKPOINT_KEY is not the key this ledger was chained with, or its key check was altered`, { ledger: where, reason: 'key' })
    }
    return current
  }

  /** The chain hash of some bytes, as 64 lowercase hex characters. */
  link(bytes: Uint8Array): string {
    return this.key ? createHmac('sha256', this.key).update(bytes).digest('hex') : createHash('sha256').update(bytes).digest('hex')
  }
}

function keyCheck(key: Buffer): string {
  return createHmac('sha256', key).update(KEY_CHECK_LABEL).digest('hex').slice(0, 32)
}
