export { installClaudeHooks, uninstallClaudeHooks, type ClaudeHooksArgs, type ClaudeHooksResult } from './claudeSettings.js'
export { parseHookEvent, type ClaudeHookEvent } from './hookEvent.js'
export { handleClaudeHook, type HookOutcome } from './handleHook.js'
export { forkClaudeSession, type ClaudeFork, type ForkClaudeSessionArgs } from './forkSession.js'
