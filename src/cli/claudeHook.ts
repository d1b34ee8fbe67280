import { handleClaudeHook } from '../adapters/claudeCode/handleHook.js'
import { parseHookEvent } from '../adapters/claudeCode/hookEvent.js'
import { hookFailed } from './hookClient.js'

/**
 * A hook's input (`forkpoint claude hook`, what the installed hooks run) handled in this
 * process: the client's way when no service answers (src/cli/hookClient.ts). A failure is
 * exit 1 with one line on stderr, never 2.
 */
export async function claudeHook(text: string): Promise<void> {
  try {
    await handleClaudeHook({ event: parseHookEvent(text), env: process.env })
  } catch (err) {
    hookFailed((err as Error).message)
  }
}
