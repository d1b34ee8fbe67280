import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { Transform } from 'node:stream'
import { DigestMismatchError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'

/** An object expected to be `size` bytes hashing to `digest`. */
export interface Expected {
  digest: Digest
  size: number
}

/**
 * Hashes bytes as they pass and, at the end, refuses them unless they are exactly the
 * expected object: a read for use (pack, push) never sends bytes that changed on disk.
 */
export class DigestCheck {
  private readonly hash = createHash('sha256')
  private bytes = 0

  constructor(
    private readonly expected: Expected,
    private readonly where: string,
  ) {}

  update(chunk: Uint8Array): void {
    this.hash.update(chunk)
    this.bytes += chunk.length
  }

  /** Throws DigestMismatchError (exit 5) unless what passed is the expected object. */
  check(): void {
    const actual: Digest = `sha256:${this.hash.digest('hex')}`
    if (this.bytes === this.expected.size && actual === this.expected.digest) return
    const what = this.bytes === this.expected.size ? `hash to ${actual}` : `are ${this.bytes} bytes, not ${this.expected.size}`
    throw new DigestMismatchError(`object ${this.expected.digest} ${this.where} is corrupt: its bytes ${what}; refusing to use it (run 'forkpoint verify')`, {
      digest: this.expected.digest,
      actual,
      size: this.bytes,
    })
  }
}

/**
 * A stream of a file's bytes that errors at its end unless they are the expected object.
 * The last chunk is held back until the check passes, so a receiver that waits for the
 * promised length (an upload, a rename after the pipeline) never completes a bad object.
 */
export function createVerifiedReadStream(
  path: string,
  expected: Expected,
  { where = `(${path})`, onBytes }: { where?: string; onBytes?: ((n: number) => void) | undefined } = {},
): Transform {
  const check = new DigestCheck(expected, where)
  let held: Buffer | null = null
  const verifying = new Transform({
    transform(chunk: Buffer, _enc, done) {
      check.update(chunk)
      onBytes?.(chunk.length)
      const previous = held
      held = chunk
      done(null, previous ?? undefined)
    },
    flush(done) {
      try {
        check.check()
        done(null, held ?? undefined)
      } catch (err) {
        done(err as Error)
      }
    },
  })
  const source = createReadStream(path)
  source.on('error', (err) => verifying.destroy(err))
  return source.pipe(verifying)
}
