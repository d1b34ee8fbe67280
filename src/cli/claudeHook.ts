import { handleClaudeHook } from '../adapters/claudeCode/handleHook.js'
import { parseHookEvent } from '../adapters/claudeCode/hookEvent.js'

/** A hook's input is one JSON document; a tool's response can be a large file, not this. */
const MAX_HOOK_INPUT = 64 * 1024 * 1024

/**
 * `forkpoint claude hook`, what the installed hooks run: the event JSON on stdin. Every
 * failure is exit 1 with one line on stderr, never 2: Claude Code takes a hook's exit 2 as
 * "block this tool call", and a snapshot that could not be made must not stop the agent.
 */
export async function claudeHook(): Promise<void> {
  try {
    await handleClaudeHook({ event: parseHookEvent(await readStdin()), env: process.env })
  } catch (err) {
    process.stderr.write(`forkpoint claude hook: ${(err as Error).message}\n`)
    process.exitCode = 1
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_HOOK_INPUT) throw new Error(`the hook input is over ${MAX_HOOK_INPUT} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
