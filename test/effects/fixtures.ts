import { Store } from '../../src/store/Store.js'
import { tempDir } from '../helpers/tmp.js'

export const KEY = 'a'.repeat(64)
export const OTHER_KEY = 'b'.repeat(64)

/** A fresh real store in a temp directory. */
export function newStore(): Promise<Store> {
  return Store.init(tempDir('effects'))
}

/** A clock that ticks one second per reading from `start`, so entry times are distinct and known. */
export function tickingClock(start = '2026-01-01T00:00:00.000Z'): () => Date {
  let t = Date.parse(start)
  return () => new Date((t += 1000))
}

/** A tool function that counts its calls and returns a result naming the call. */
export function counted<A>(label: string): { fn: (args: A) => Promise<{ label: string; n: number; args: A }>; calls: () => number } {
  let n = 0
  return { fn: async (args: A) => ({ label, n: ++n, args }), calls: () => n }
}
