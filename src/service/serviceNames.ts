// What a client needs to reach the store's service, without the service's code: the Claude Code
// hook's client (src/cli/hookMain.ts) loads these and Node's own modules only.

/** The socket a store's service listens on by default, and where the CLI looks for it, in the store. */
export const STORE_SERVICE_SOCKET = 'service.sock'

/** Where a TCP service keeps its bearer token, in the store, readable by the store's owner alone (as Jupyter keeps its runtime file). */
export const SERVICE_TOKEN_FILE = 'service-token'

/** The caller's workspace (URI-encoded), sent by `callService`: a service keeping another one answers 421 and the caller runs the operation itself. */
export const WORKSPACE_HEADER = 'x-forkpoint-workspace'

/** Where the service answers a Claude Code hook (`POST`, `ServeArgs.claudeHook`: src/adapters/claudeCode/answerHook.ts). */
export const CLAUDE_HOOK_PATH = '/v1/claude/hook'

/** What the service reads of a hook's request: the hook's input (at most 64 MiB, as the hook in its own process reads it) and its environment (Linux gives a program a few MiB at most). */
export const MAX_HOOK_REQUEST = 72 * 1024 * 1024
