/**
 * Fuzz targets that misbehave on purpose, to show the fuzzer reports each kind of
 * finding (test/security/fuzzRegressions.test.ts): a stub parser that
 * throws a TypeError, one that throws an exit-6 error, one that hangs, one whose process
 * dies, one that takes too much memory, and one that refuses everything as it should.
 */
import { CorruptDataError, InternalError } from '../../src/errors/index.js'
import type { OpenTarget, RunInput } from '../../fuzz/Target.js'

const LONG = 12

const STUBS: Record<string, RunInput> = {
  'type-error': (input) => Promise.resolve(input.length > LONG ? (null as unknown as { x: number }).x : 0),
  exit6: (input) => (input.length > LONG ? Promise.reject(new InternalError('a bug')) : Promise.resolve()),
  hang: (input) => {
    // blocks the event loop, as a backtracking pattern does, without spending the machine's CPU
    while (input.length > LONG) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000)
    return Promise.resolve()
  },
  crash: (input) => (input.length > LONG ? new Promise(() => setImmediate(() => process.exit(70))) : Promise.resolve()),
  bloat: (input) => Promise.resolve(input.length > LONG ? Buffer.alloc(400 * 1024 ** 2, 1).length : 0),
  refuses: () => Promise.reject(new CorruptDataError('not data')),
}

export const openTarget: OpenTarget = (name) => Promise.resolve(STUBS[name]!)
export const BROKEN_TARGETS = Object.keys(STUBS)
