/** `--deterministic`: the clock starts at `epochMs` and Math.random follows `seed`; both are kept in the run's meta. */
export interface DeterministicSettings {
  epochMs: number
  seed: number
}

export function formatDeterministic(s: DeterministicSettings): string {
  return `${s.epochMs}:${s.seed}`
}

export function parseDeterministic(text: string | undefined): DeterministicSettings | null {
  const m = /^(\d+):(\d+)$/.exec(text ?? '')
  return m ? { epochMs: Number(m[1]), seed: Number(m[2]) } : null
}

/**
 * Pin `Date` and `Math.random` so code that stamps prompts with the time or picks at
 * random does the same on replay. The clock starts at `epochMs` and moves one
 * millisecond per reading (monotonic, like a real clock, and the same every run);
 * `Math.random` is a seeded sfc32. Dates built from explicit arguments are untouched.
 */
export function pinClockAndRandom({ epochMs, seed }: DeterministicSettings): void {
  const RealDate = Date
  let ticks = 0
  const now = () => epochMs + ticks++
  const PinnedDate = new Proxy(RealDate, {
    construct: (target, args, newTarget) => Reflect.construct(target, args.length === 0 ? [now()] : args, newTarget) as object,
    apply: () => new RealDate(now()).toString(),
    get: (target, prop, receiver) => (prop === 'now' ? now : (Reflect.get(target, prop, receiver) as unknown)),
  })
  globalThis.Date = PinnedDate
  Math.random = sfc32(seed)
}

function sfc32(seed: number): () => number {
  let a = 0x9e3779b9
  let b = 0x243f6a88
  let c = 0xb7e15162
  let d = seed >>> 0
  const next = () => {
    a >>>= 0
    b >>>= 0
    c >>>= 0
    d >>>= 0
    let t = (a + b) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    d = (d + 1) | 0
    t = (t + d) | 0
    c = (c + t) | 0
    return (t >>> 0) / 4294967296
  }
  for (let i = 0; i < 12; i++) next()
  return next
}
