import { diffRuns, type RunDiff } from '../diff/diffRuns.js'
import { loadRun } from '../core/loadRun.js'
import { normalizeRun } from './normalizeRun.js'
import { PayloadCipher } from '../redact/payloadCipher.js'
import type { StoreLocator } from '../../store/findStore.js'

/** Diff two runs (artifacts or ids) after normalising both, as CI compares them; `env`'s FORKPOINT_KEY opens encrypted payloads. */
export async function ciDiff({
  expected,
  actual,
  window = 10,
  env,
  ...where
}: { expected: string; actual: string; window?: number; env: NodeJS.ProcessEnv } & StoreLocator): Promise<RunDiff> {
  const a = await loadRun({ ...where, spec: expected })
  const b = await loadRun({ ...where, spec: actual })
  const cipher = PayloadCipher.forRuns(env, a, b)
  return diffRuns({ a: normalizeRun(a), b: normalizeRun(b), window, cipher })
}
