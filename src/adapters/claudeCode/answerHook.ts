import { isAbsolute } from 'node:path'
import { UsageError } from '../../errors/index.js'
import type { ServedWorkspace } from '../../service/httpService.js'
import { describeValue } from '../../util/describeValue.js'
import { isInside } from '../../util/isInside.js'
import { type HookOutcome, hookInWorkspace } from './handleHook.js'
import { IN_PROCESS_ENV } from './hookEnv.js'
import { checkHookEvent } from './hookEvent.js'

/**
 * `POST /v1/claude/hook`: a Claude Code hook answered by the store's service (`forkpoint
 * serve` hands the service this function, `ServeArgs.claudeHook`), which the
 * hook's client (`forkpoint claude hook`, src/cli/hookMain.ts) sends as
 * `{"env": {...}, "event": <the hook's input>}`. `env` is the hook process's environment:
 * its redaction settings and the secret values to scrub from the steps, as the hook in its
 * own process takes them. The service works in its own store and workspace with its
 * watcher's scanner; null when the event's directory is not in that workspace (the client
 * then runs the hook itself, finding the store from that directory).
 * @throws {UsageError} an input the hook would refuse, an environment not of strings, or one naming a fork's branch or a recording's files (such hooks run in their own process)
 */
export async function answerClaudeHook(body: unknown, at: ServedWorkspace): Promise<HookOutcome | null> {
  const { env, event: input } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
  const event = checkHookEvent(input)
  if (!isAbsolute(event.cwd) || !isInside(at.workspace, event.cwd)) return null
  return hookInWorkspace({ event, env: hookEnv(env), ...at })
}

/** The hook process's environment as the request gives it, without `FORKPOINT_STORE` (the service's store is the one). @throws {UsageError} */
function hookEnv(value: unknown): NodeJS.ProcessEnv {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`a hook request's env must be an object of strings (got ${describeValue(value)})`, { field: 'env' })
  const env: NodeJS.ProcessEnv = {}
  for (const [name, text] of Object.entries(value)) {
    if (typeof text !== 'string') throw new UsageError(`a hook request's env holds strings (got ${describeValue(text)} for ${JSON.stringify(name)})`, { field: 'env' })
    if (IN_PROCESS_ENV.includes(name)) throw new UsageError(`the service answers no hook with ${name}: such a hook runs in its own process`, { field: 'env' })
    if (name !== 'FORKPOINT_STORE') env[name] = text
  }
  return env
}
