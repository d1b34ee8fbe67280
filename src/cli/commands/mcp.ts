import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'

export function registerMcp(program: Command): void {
  common(program.command('mcp'))
    .description('serve the workspace operations as MCP tools over stdin/stdout (snapshot, status, diff, log, checkout, branch, commit, abort, run, fork, merge, runs, replay)')
    .action(async (_opts: object, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { serveMcpStdio } = await import('../../service/mcpServer.js')
      await serveMcpStdio({ dir: flags.dir, store: flags.store })
    })
}
