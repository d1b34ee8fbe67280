import { UsageError } from '../../errors/index.js'
import { diffRuns, type RunDiff } from './diffRuns.js'
import { type ConfineFile, loadRun } from '../core/loadRun.js'
import { PayloadCipher } from '../redact/payloadCipher.js'
import type { StoreLocator } from '../../store/findStore.js'

/** Whether a `diff` argument names a run (a `run-…` id or prefix, `latest`/`last`, or a `*.json` artifact) rather than a snapshot. */
export function isRunSpec(spec: string): boolean {
  return /^run-[0-9a-f]{1,20}$/.test(spec) || spec === 'latest' || spec === 'last' || spec.endsWith('.json')
}

/**
 * First divergence of run `b` from run `a` (ids or artifact files); without `b`, from
 * the run `a` was forked or replayed from. Encrypted payloads are opened when
 * `env` (the caller's environment) sets `FORKPOINT_KEY`, else compared by hash. Every file read, the parent's included,
 * goes through `confine` when a remote caller asks.
 */
export async function compareRuns({
  a,
  b,
  window = 10,
  env,
  confine,
  ...where
}: { a: string; b?: string | undefined; window?: number; env: NodeJS.ProcessEnv; confine?: ConfineFile | undefined } & StoreLocator): Promise<RunDiff> {
  if (!Number.isInteger(window) || window < 0) throw new UsageError('--window must be a whole number of steps')
  const load = (spec: string) => loadRun({ ...where, confine, spec })
  // a before b, as named: the first file refused is the one a caller names first
  const named = b === undefined ? null : await load(a)
  const runB = await load(b ?? a)
  const runA = named ?? (await load(parentOf(runB.parent, a)))
  const cipher = PayloadCipher.forRuns(env, runA, runB)
  return diffRuns({ a: runA, b: runB, window, cipher })
}

function parentOf(parent: string | undefined, spec: string): string {
  if (!parent) throw new UsageError(`run ${spec} has no parent run to compare with; give two runs`)
  return parent
}
