import { createCipheriv, createDecipheriv, createHmac, randomBytes, scryptSync } from 'node:crypto'
import { DecryptionError, EncryptionKeyError } from '../../errors/index.js'
import { type EncryptionInfo, isSealed, type JsonValue, SEALED_PREFIX } from '../../objects/Run.js'

const KEY_CHECK_LABEL = 'forkpoint run key check v1'
/** A fixed salt: passphrases are stretched once per process; for real secrecy use a random 32-byte key. */
const PASSPHRASE_SALT = 'forkpoint/trace/aes-256-gcm/v1'

/** The last passphrase stretched, so it is stretched once per process however many callers ask. */
let stretched: { material: string; cipher: PayloadCipher } | null = null

/**
 * AES-256-GCM for step payloads (`--redact encrypt`). The key comes from
 * `FORKPOINT_KEY`: 64 hex characters or base64 of 32 bytes are used as they are; any
 * other text is a passphrase stretched with scrypt. Each payload gets a fresh 96-bit IV;
 * the GCM tag authenticates it, bound to which field it is (input, output, error).
 */
export class PayloadCipher {
  readonly key: Buffer
  readonly kdf: EncryptionInfo['kdf']

  private constructor(key: Buffer, kdf: EncryptionInfo['kdf']) {
    this.key = key
    this.kdf = kdf
  }

  static fromEnv(env: NodeJS.ProcessEnv, purpose = 'encrypted payloads'): PayloadCipher {
    const material = env['FORKPOINT_KEY']
    if (!material) throw new EncryptionKeyError(`${purpose} need a key: set FORKPOINT_KEY (e.g. FORKPOINT_KEY=$(openssl rand -hex 32))`)
    return PayloadCipher.fromMaterial(material)
  }

  /** The cipher to read encrypted payloads of `runs` with when any has them and a key is set; else null (compared as sealed). */
  static forRuns(env: NodeJS.ProcessEnv, ...runs: Array<{ encryption?: EncryptionInfo | undefined }>): PayloadCipher | null {
    return runs.some((r) => r.encryption) && env['FORKPOINT_KEY'] ? PayloadCipher.fromEnv(env) : null
  }

  static fromMaterial(material: string): PayloadCipher {
    if (/^[0-9a-fA-F]{64}$/.test(material)) return new PayloadCipher(Buffer.from(material, 'hex'), 'raw')
    const b64 = Buffer.from(material, 'base64')
    if (b64.length === 32 && /^[A-Za-z0-9+/]{43}=?$/.test(material)) return new PayloadCipher(b64, 'raw')
    if (material.length < 8) throw new EncryptionKeyError('FORKPOINT_KEY is too short: use 64 hex characters or a passphrase of 8+ characters')
    if (stretched?.material !== material) stretched = { material, cipher: new PayloadCipher(scryptSync(material, PASSPHRASE_SALT, 32), 'scrypt') }
    return stretched.cipher
  }

  info(): EncryptionInfo {
    return { alg: 'aes-256-gcm', kdf: this.kdf, keyCheck: this.keyCheck() }
  }

  keyCheck(): string {
    return createHmac('sha256', this.key).update(KEY_CHECK_LABEL).digest('hex').slice(0, 32)
  }

  /** Fail early and clearly when the key is not the one the run was sealed with. */
  assertMatches(info: EncryptionInfo): void {
    if (info.keyCheck !== this.keyCheck()) throw new DecryptionError('FORKPOINT_KEY is not the key this run was encrypted with')
  }

  seal(value: JsonValue, field: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    cipher.setAAD(Buffer.from(field))
    const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
    return `${SEALED_PREFIX}${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${data.toString('base64url')}`
  }

  open(sealed: unknown, field: string): JsonValue {
    if (!isSealed(sealed)) throw new DecryptionError(`${field} is not an encrypted payload`)
    const [iv, tag, data] = sealed.slice(SEALED_PREFIX.length).split('.')
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv ?? '', 'base64url'))
      decipher.setAAD(Buffer.from(field))
      decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'))
      const text = Buffer.concat([decipher.update(Buffer.from(data ?? '', 'base64url')), decipher.final()]).toString('utf8')
      return JSON.parse(text) as JsonValue
    } catch (err) {
      throw new DecryptionError(`cannot decrypt ${field}: wrong FORKPOINT_KEY or tampered data`, {}, { cause: err })
    }
  }
}
