import type { Command } from 'commander'
import { loadOptional } from '../../util/optionalPackage.js'
import { allowFlags } from '../allowFlags.js'
import { common, commonFlags } from '../context.js'

export function registerMcp(program: Command): void {
  allowFlags(common(program.command('mcp')))
    .description(
      'serve the operations as MCP tools over stdin/stdout (snapshot, status, diff, log, checkout, branch, commit, abort, run, fork, merge, show, runs, replay, push, pull)',
    )
    .action(async (opts: { allowPath: string[]; allowRemote: string[] }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { serveMcpStdio } = await loadOptional('mcp', () => import('../../service/mcpServer.js'))
      await serveMcpStdio({ dir: flags.dir, store: flags.store }, { allowPaths: opts.allowPath, allowRemotes: opts.allowRemote, env: process.env })
    })
}
