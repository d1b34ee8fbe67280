import { z } from 'zod'
import { outcomeRendering } from '../text/outcome.js'
import { defineOperation } from '../operation.js'
import { MAX_CANDIDATES, commandPatternArgs, patternInput, patternLocal, patternOutcome } from './commandPattern.js'

export const speculate = defineOperation({
  name: 'speculate',
  description: 'Race shell command lines in parallel sandboxed branches: the first to exit 0 is committed into the workspace, the others are killed and their branches aborted.',
  input: {
    command: z.array(z.string()).min(1).max(MAX_CANDIDATES).describe('a candidate command line (one per candidate)'),
    ...patternInput,
  },
  local: patternLocal,
  output: patternOutcome,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: { usage: 'speculate', short: { command: 'c' }, negatable: ['isolate', 'workerTimeout'], progress: 'lines', cancelOnSignals: true, rendering: outcomeRendering },
  async run(where, { command, ...args }, ctx) {
    const { speculateCommands } = await import('../../patterns/speculateCommands.js')
    return speculateCommands({ ...(await commandPatternArgs(where, args, ctx)), commands: command })
  },
})
