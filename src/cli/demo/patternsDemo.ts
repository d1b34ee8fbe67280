import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CommandValue } from '../../patterns/runCandidate.js'
import type { Outcome } from '../../patterns/types.js'
import { formatOutcome } from '../../operations/text/outcome.js'
import type { DemoContext } from './DemoContext.js'
import { demoWorkspace } from './storeDemo.js'

/** Candidate patches for the demo project's `a - b` bug; only one makes `node test.js` pass. */
const PATCHES = ['a * b', 'b - a', 'a + b', 'a / b']

/** Fix the failing test by exploring candidate patches in parallel sandboxed branches. */
export async function patternsDemo(ctx: DemoContext): Promise<void> {
  const lib = await import('../../index.js')
  const dir = demoWorkspace(ctx)
  ctx.say('Explore candidate fixes in parallel branches')
  const ws = await lib.Workspace.open({ dir })
  const cases = PATCHES.map((p, i) => `${i}) ${p}`).join(' ')
  const patch = `case $FORKPOINT_ATTEMPT in ${PATCHES.map((p, i) => `${i}) fix='${p}';;`).join(' ')} esac; sed -i "s|return a - b|return $fix|" calc.js && node test.js`
  ctx.show(`${PATCHES.length} attempts, each patches calc.js its own way in its own branch and runs node test.js (${cases})`)
  const outcome: Outcome<CommandValue> = await lib.bestOfN<CommandValue>(patch, { n: PATCHES.length, timeout: '30s' }).apply(ws)
  ctx.show(formatOutcome(outcome))
  ctx.check(outcome.committed && outcome.winner === PATCHES.indexOf('a + b'), 'the only passing patch (a + b) was committed; the others were thrown away')
  ctx.check(readFileSync(join(dir, 'calc.js'), 'utf8').includes('return a + b'), 'calc.js in the workspace now adds')
  ctx.check(execFileSync(process.execPath, ['test.js'], { cwd: dir, encoding: 'utf8' }).trim() === 'ok', 'node test.js passes in the workspace')
  ctx.check((await ws.branches()).length === 0, 'every branch was committed or aborted: none is left')
}
