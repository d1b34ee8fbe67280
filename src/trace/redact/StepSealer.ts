import type { PayloadCipher } from './payloadCipher.js'
import type { Redactor } from './Redactor.js'
import type { JsonValue, StepError } from '../../objects/Run.js'
import { hashPayload } from '../core/stepHash.js'

/**
 * Turns live values into what is recorded: redacted first (always, before anything else
 * sees them), hashed, then sealed when the run is encrypted. Replay runs a live request
 * through the same steps so it hashes exactly as its recording did.
 */
export class StepSealer {
  constructor(
    readonly redactor: Redactor,
    readonly cipher: PayloadCipher | null = null,
  ) {}

  /** The recorded form and hash of a payload; `clear` is the redacted plaintext. */
  seal(value: unknown, field: 'input' | 'output'): { stored: JsonValue; hash: string; clear: JsonValue } {
    const clear = this.redactor.redact(value)
    const hash = hashPayload(clear, this.cipher?.key)
    return { stored: this.cipher ? this.cipher.seal(clear, field) : clear, hash, clear }
  }

  sealMeta(meta: unknown): { [key: string]: JsonValue } | undefined {
    if (meta === undefined) return undefined
    const clear = this.redactor.redact(meta)
    return (this.cipher ? { sealed: this.cipher.seal(clear, 'meta') } : clear) as { [key: string]: JsonValue }
  }

  sealError(err: unknown): StepError | string {
    const e = err instanceof Error ? err : new Error(String(err))
    const code = (e as { code?: unknown }).code
    const recorded: StepError = { name: e.name, message: e.message }
    if (typeof code === 'string') recorded.code = code
    const clear = this.redactor.redact(recorded) as unknown as StepError // secrets out of its text, as of any payload
    return this.cipher ? this.cipher.seal(clear as unknown as JsonValue, 'error') : clear
  }

  /** A recorded payload back as plaintext (decrypting when sealed). */
  open(stored: JsonValue, field: 'input' | 'output' | 'error' | 'meta'): JsonValue {
    return this.cipher ? this.cipher.open(stored, field) : stored
  }
}
