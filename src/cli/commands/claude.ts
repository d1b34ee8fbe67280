import type { Command } from 'commander'
import type { ClaudeFork } from '../../adapters/claudeCode/forkSession.js'
import type { ClaudeHooksResult } from '../../adapters/claudeCode/claudeSettings.js'
import { type Where, common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { shellQuote } from '../../trace/core/shellQuote.js'

/** `forkpoint claude install [--uninstall]`: forkpoint's hooks in (or out of) the workspace's .claude/settings.json. */
export async function claudeInstallCommand({ uninstall = false, command, ...where }: Where & { uninstall?: boolean; command?: string }): Promise<ClaudeHooksResult> {
  const { installClaudeHooks, uninstallClaudeHooks } = await import('../../adapters/claudeCode/claudeSettings.js')
  return uninstall ? uninstallClaudeHooks(where) : installClaudeHooks({ ...where, ...(command ? { command } : {}) })
}

/** `forkpoint claude fork SESSION -n N [-p PROMPT]`: N sessions from the session's latest image, each in a branch of its own. */
export async function claudeForkCommand(args: Where & { session: string; count: number; prompt?: string; claude?: string; args: string[] }): Promise<{ forks: ClaudeFork[] }> {
  const { forkClaudeSession } = await import('../../adapters/claudeCode/forkSession.js')
  const { count, ...rest } = args
  return { forks: await forkClaudeSession({ ...rest, n: count, env: process.env }) }
}

export const claudeInstallView: Rendering<ClaudeHooksResult> = { human: (r) => `${r.changed ? 'wrote' : 'already set:'} ${r.settings}` }
export const claudeForkView: Rendering<{ forks: ClaudeFork[] }> = {
  human: (r) =>
    r.forks
      .map((f) =>
        [
          f.index,
          f.branch.path,
          f.ended ? `${f.ended.sessionId ?? '-'}\texit ${f.ended.exitCode ?? 'signal'}` : `FORKPOINT_CLAUDE_BRANCH=${f.branch.name} ${shellQuote(f.command)}`,
        ].join('\t'),
      )
      .join('\n'),
}

export function registerClaude(program: Command): void {
  const claude = common(program.command('claude')).description('Claude Code: hooks that snapshot and record every tool call, and forks of a session')
  common(claude.command('install'))
    .description("add forkpoint's hooks (PreToolUse, PostToolUse, PostToolUseFailure, Stop, SessionEnd) to the workspace's .claude/settings.json, keeping everything else")
    .option('--uninstall', "take forkpoint's hooks out again")
    .option('--command <cmd>', 'the command the hooks run (default: this forkpoint, by absolute path, `claude hook`)')
    .action(async (opts: { uninstall?: boolean; command?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(
        flags,
        await claudeInstallCommand({ dir: flags.dir, store: flags.store, uninstall: opts.uninstall === true, ...(opts.command ? { command: opts.command } : {}) }),
        claudeInstallView,
      )
    })
  claude
    .command('hook')
    .description('what the installed hooks run: reads the event from stdin; exits 1 (never 2, which would block the tool) on failure')
    // arguments are not checked: a usage error would be exit 2, which Claude Code takes as "block this tool call"
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async () => (await import('../hookClient.js')).runClaudeHook(async (text) => (await import('../claudeHook.js')).claudeHook(text)))
  common(claude.command('fork <SESSION> [ARGS...]'))
    .description("N sessions from SESSION's latest image, each in a copy-on-write branch; with -p, run them (claude --resume SESSION --fork-session -p PROMPT ARGS)")
    .requiredOption('-n, --count <N>', 'how many forks', (v) => Number(v))
    .option('-p, --prompt <text>', 'start every fork headless with this prompt')
    .option('--claude <bin>', 'the Claude Code binary', 'claude')
    .action(async (session: string, args: string[], opts: { count: number; prompt?: string; claude: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const result = await claudeForkCommand({
        dir: flags.dir,
        store: flags.store,
        session,
        count: opts.count,
        claude: opts.claude,
        args,
        ...(opts.prompt === undefined ? {} : { prompt: opts.prompt }),
      })
      print(flags, result, claudeForkView)
      if (result.forks.some((f) => f.ended && f.ended.exitCode !== 0)) process.exitCode = 1
    })
}
