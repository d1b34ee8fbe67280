import type { Command } from 'commander'
import { loadOptional } from '../../util/optionalPackage.js'
import { common, commonFlags } from '../context.js'

export function registerMcp(program: Command): void {
  common(program.command('mcp'))
    .description('serve the workspace operations as MCP tools over stdin/stdout (snapshot, status, diff, log, checkout, branch, commit, abort, run, fork, merge, runs, replay)')
    .option(
      '--allow-path <dir>',
      'a directory outside the workspace whose run artifacts replay and diff may read; repeatable',
      (value: string, list: string[]) => [...list, value],
      [],
    )
    .action(async (opts: { allowPath: string[] }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { serveMcpStdio } = await loadOptional('mcp', () => import('../../service/mcpServer.js'))
      await serveMcpStdio({ dir: flags.dir, store: flags.store }, { allowPaths: opts.allowPath })
    })
}
