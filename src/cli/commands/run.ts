import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

interface RunFlags {
  branch?: string
  net: string
  memory?: string
  pids?: string
  cpu?: string
  timeout?: string
}

export function registerRun(program: Command): void {
  common(program.command('run'))
    .description('run CMD sandboxed (own mount, PID and network namespaces; the branch at the workspace path); exits with its code')
    .argument('<CMD...>', 'the command and its arguments (after --)')
    .option('--branch <NAME>', 'run inside this live branch (default: the workspace itself, its store read-only)')
    .option('--net <MODE>', 'none (no network, not even the host 127.0.0.1) or host', 'none')
    .option('--memory <SIZE>', 'memory limit, e.g. 512M')
    .option('--pids <N>', 'most processes at once')
    .option('--cpu <SECONDS>', 'CPU time limit in seconds')
    .option('--timeout <DURATION>', 'wall-clock limit, e.g. 60s; kills the whole process tree')
    .action(async (argv: string[], opts: RunFlags, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { runCommand } = await import('../../index.js')
      const result = await runCommand({
        dir: flags.dir,
        store: flags.store,
        cmd: argv,
        branch: opts.branch,
        net: opts.net as 'none',
        memory: opts.memory,
        pids: opts.pids === undefined ? undefined : Number(opts.pids),
        cpu: opts.cpu === undefined ? undefined : Number(opts.cpu),
        timeout: opts.timeout,
      })
      if (!flags.json) {
        process.stdout.write(result.stdout)
        process.stderr.write(result.stderr)
        if (result.timedOut) process.stderr.write(`forkpoint: timed out after ${opts.timeout}; the process tree was killed\n`)
      }
      emit(flags, result, () => '')
      process.exitCode = result.exitCode
    })
}
