import { TRACE_ENV } from '../../trace/record/traceEnv.js'

// Names the hook's client (src/cli/hookMain.ts) shares with the hook's code, without loading it.

/** Set by `forkClaudeSession` for the sessions it starts: the fork's branch, whose files a hook snapshots. */
export const FORK_BRANCH_ENV = 'FORKPOINT_CLAUDE_BRANCH'

/** A hook's input is one JSON document; a tool's response can be a large file, not this. */
export const MAX_HOOK_INPUT = 64 * 1024 * 1024

/**
 * What keeps a hook in its own process: a fork's branch, and the journal or recording of a
 * `forkpoint run --record` (or `replay`) around Claude Code. The store's service answers
 * only hooks without them: a request never names a file or branch for the service to use.
 */
export const IN_PROCESS_ENV: readonly string[] = [FORK_BRANCH_ENV, TRACE_ENV.journal, TRACE_ENV.replay]
