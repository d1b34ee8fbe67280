import { UsageError } from '../../errors/index.js'
import { describeValue } from '../../util/describeValue.js'

interface HookBase {
  session_id: string
  /** The directory Claude Code runs in: the workspace, or a fork's branch. */
  cwd: string
  transcript_path?: string
}

/** What Claude Code hands a hook on stdin, for the events forkpoint installs hooks for. */
export type ClaudeHookEvent =
  | (HookBase & { hook_event_name: 'PreToolUse'; tool_name: string; tool_input: unknown; tool_use_id?: string })
  | (HookBase & { hook_event_name: 'PostToolUse'; tool_name: string; tool_input: unknown; tool_response: unknown; tool_use_id?: string })
  | (HookBase & { hook_event_name: 'PostToolUseFailure'; tool_name: string; tool_input: unknown; error: string; tool_use_id?: string })
  | (HookBase & { hook_event_name: 'Stop' })
  | (HookBase & { hook_event_name: 'SessionEnd' })

export const HOOKED_EVENTS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'SessionEnd'] as const

/** The events that end a turn's run: Stop, and SessionEnd for a session that ends without one (the user interrupted the last turn). */
export function endsRun(name: ClaudeHookEvent['hook_event_name']): name is 'Stop' | 'SessionEnd' {
  return name === 'Stop' || name === 'SessionEnd'
}

/**
 * A hook's input, checked: JSON with a session id, a working directory, and for tool
 * events the tool's name and input (and, after it ran, its response or its error).
 * @throws {UsageError} anything else, saying what is missing
 */
export function parseHookEvent(text: string): ClaudeHookEvent {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new UsageError(`a Claude Code hook's input must be JSON (got ${JSON.stringify(text.slice(0, 60))})`)
  }
  return checkHookEvent(value)
}

/** A hook's input parsed already (the service's request carries it so), checked as `parseHookEvent` checks it. @throws {UsageError} */
export function checkHookEvent(value: unknown): ClaudeHookEvent {
  const e = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Record<string, unknown>
  const name = e['hook_event_name']
  if (!HOOKED_EVENTS.includes(name as (typeof HOOKED_EVENTS)[number])) {
    throw new UsageError(`forkpoint handles the Claude Code hook events ${HOOKED_EVENTS.join(', ')} (got ${describeValue(name)})`, { field: 'hook_event_name' })
  }
  for (const field of ['session_id', 'cwd'] as const) {
    if (typeof e[field] !== 'string' || e[field] === '') throw new UsageError(`the hook input's ${field} must be a non-empty string (got ${describeValue(e[field])})`, { field })
  }
  if (!endsRun(name as ClaudeHookEvent['hook_event_name'])) {
    if (typeof e['tool_name'] !== 'string' || e['tool_name'] === '')
      throw new UsageError(`a ${String(name)} hook input needs tool_name (got ${describeValue(e['tool_name'])})`, { field: 'tool_name' })
    if (!('tool_input' in e)) throw new UsageError(`a ${String(name)} hook input needs tool_input`, { field: 'tool_input' })
    if (name === 'PostToolUse' && !('tool_response' in e)) throw new UsageError('a PostToolUse hook input needs tool_response', { field: 'tool_response' })
    if (name === 'PostToolUseFailure' && typeof e['error'] !== 'string')
      throw new UsageError(`a PostToolUseFailure hook input needs error, a string (got ${describeValue(e['error'])})`, { field: 'error' })
  }
  return e as unknown as ClaudeHookEvent
}
