import { Transform, type TransformCallback } from 'node:stream'

/**
 * Passes bytes through until more than `limit` have passed, then fails with the error
 * `exceeded()` makes. The limit may be lowered as the stream tells what it holds: a
 * decompression stops at the size its data declares, however much a bomb would give.
 */
export class ByteBudget extends Transform {
  private passed = 0

  constructor(
    public limit: number,
    private readonly exceeded: (limit: number) => Error,
  ) {
    super()
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.passed += chunk.length
    if (this.passed > this.limit) return done(this.exceeded(this.limit))
    done(null, chunk)
  }
}
