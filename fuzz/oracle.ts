import { isForkpointError } from '../src/errors/index.js'

/** What a target did with one input that it must not: throw anything but a ForkpointError of exit 2 or 5. */
export interface Misbehaviour {
  kind: 'threw' | 'exit6' | 'hang' | 'crash' | 'rss'
  detail: string
}

/** The oracle for a thrown error: null when it is a refusal the CLI reports as data (5) or usage (2), else what is wrong. */
export function judgeError(err: unknown): Misbehaviour | null {
  if (isForkpointError(err)) {
    if (err.exitCode === 2 || err.exitCode === 5) return null
    return { kind: 'exit6', detail: `${err.name} (exit ${err.exitCode}): ${clip(err.message)}` }
  }
  const e = err as { name?: unknown; message?: unknown; stack?: unknown }
  return { kind: 'threw', detail: clip(typeof e?.stack === 'string' ? e.stack : `${String(e?.name)}: ${String(e?.message ?? err)}`) }
}

function clip(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text
}
