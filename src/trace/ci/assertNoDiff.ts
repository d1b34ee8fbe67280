import { ciCheck, type CiCheckArgs, type CiCheckResult } from './ciCheck.js'
import { renderRunDiff } from '../diff/renderRunDiff.js'

/**
 * A test helper for vitest, node:test or any runner: run the entrypoint offline against
 * the golden artifact and throw (with the divergence report) unless it matches.
 *
 * @example
 * test('agent behaves as recorded', () => assertNoDiff({ entrypoint: 'agent.js', expected: 'agent.run.json' }))
 */
export async function assertNoDiff(args: CiCheckArgs): Promise<CiCheckResult> {
  const result = await ciCheck({ stdout: 'capture', ...args })
  if (result.outcome === 'diff') throw new Error(`run diverged from ${args.expected}\n${renderRunDiff(result.diff)}`)
  if (result.outcome === 'offline_violation') throw new Error(`run matched ${args.expected} but tried to reach the network: ${result.offlineViolations.join(', ')}`)
  return result
}
