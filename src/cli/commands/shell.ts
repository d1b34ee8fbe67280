import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'

const collect = (value: string, previous: string[]): string[] => [...previous, value]

/** A shell in a live branch, sandboxed as `run --branch` runs: the branch at the workspace's own path. */
export function registerShell(program: Command): void {
  common(program.command('shell <NAME>'))
    .description("open a shell in a live branch, shown at the workspace's own path (sandboxed as 'run --branch'); exits with the shell's code")
    .option('-c, --command <CMD>', 'run CMD with sh -c instead of an interactive shell')
    .option('--net <MODE>', 'none (no network, not even the host 127.0.0.1) or host', 'none')
    .option('--env <NAME>', 'pass this variable of ours in too (repeatable)', collect, [])
    .action(async (name: string, opts: { command?: string; net: string; env: string[] }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { shellWithEffects } = await import('../../effects/runWithEffects.js')
      const shell = await shellWithEffects({
        dir: flags.dir,
        store: flags.store,
        branch: name,
        command: opts.command,
        net: opts.net as 'none',
        passEnv: opts.env,
        callerEnv: process.env,
      })
      for (const warning of shell.warnings) process.stderr.write(`forkpoint: warning: ${warning}\n`)
      process.exitCode = shell.exitCode
    })
}
