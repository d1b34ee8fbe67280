import { writeFileSync } from 'node:fs'
import type { StepHook } from '../effects/stepHook.js'

/**
 * Test-only, read at the CLI edge: `FORKPOINT_TEST_PAUSE_AT=STEP[#N]` stops the process at
 * the N-th step named STEP (the first by default), after writing the step's name to
 * `FORKPOINT_TEST_PAUSE_FILE`, so a test can kill it exactly there.
 */
export function pauseAtFromEnv(env: NodeJS.ProcessEnv): StepHook | undefined {
  const at = env['FORKPOINT_TEST_PAUSE_AT']
  const file = env['FORKPOINT_TEST_PAUSE_FILE']
  if (!at || !file) return undefined
  const [step, nth = '1'] = at.split('#')
  let seen = 0
  return async (name) => {
    if (name !== step || ++seen !== Number(nth)) return
    writeFileSync(file, at)
    await new Promise<never>(() => setInterval(() => undefined, 60_000)) // held until killed
  }
}
