import { z } from 'zod'
import { outcomeRendering } from '../text/outcome.js'
import { defineOperation } from '../operation.js'
import { MAX_CANDIDATES, commandPatternArgs, patternInput, patternLocal, patternOutcome } from './commandPattern.js'

export const explore = defineOperation({
  name: 'explore',
  description:
    'Best-of-N: run a command N times in parallel sandboxed branches (FORKPOINT_ATTEMPT=0..N-1), score each finished one, and commit the best success into the workspace; the other branches are aborted.',
  input: {
    command: z.array(z.string()).min(1).describe('the command; one argument is a shell command line'),
    attempts: z.number().int().min(1).max(MAX_CANDIDATES).optional().describe('how many attempts (default 4)'),
    score: z.string().optional().describe('run in each finished branch; prints a number, higher is better (default: exit 0 = 1, else 0)'),
    ...patternInput,
  },
  local: patternLocal,
  output: patternOutcome,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: { usage: 'explore <command...>', short: { attempts: 'n' }, negatable: ['isolate', 'workerTimeout'], progress: 'lines', cancelOnSignals: true, rendering: outcomeRendering },
  async run(where, { command, attempts, score, ...args }, ctx) {
    const { exploreCommand } = await import('../../patterns/exploreCommand.js')
    return exploreCommand({
      ...(await commandPatternArgs(where, args, ctx)),
      cmd: command.length === 1 ? command[0]! : command,
      ...(attempts === undefined ? {} : { n: attempts }),
      ...(score === undefined ? {} : { score }),
    })
  },
})
