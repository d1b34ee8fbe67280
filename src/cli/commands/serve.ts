import { promises as fs } from 'node:fs'
import { type Command, Option } from 'commander'
import { InputNotFoundError, UsageError } from '../../errors/index.js'
import { allowFlags } from '../allowFlags.js'
import { common, commonFlags } from '../context.js'
import { stopSignal } from '../stopSignal.js'
import { wholeNumber } from '../wholeNumber.js'

interface ServeFlags {
  listen?: string
  token?: string
  tokenFile?: string
  allowPath: string[]
  allowRemote: string[]
  watch: boolean
  scanInFullUpTo?: string
}

export function registerServe(program: Command): void {
  allowFlags(common(program.command('serve')))
    .description(
      "serve the workspace's operations as JSON endpoints (POST /v1/<operation>, GET /openapi.json) on a Unix socket in the store, keeping the workspace warm with a file watcher",
    )
    .option('--listen <address>', 'unix:PATH or HOST:PORT (default: unix:<store>/service.sock); TCP always needs the bearer token')
    .option('--token-file <file>', 'TCP: the bearer token every request must carry (default: $FORKPOINT_TOKEN, else a new one); written to <store>/service-token, mode 0600')
    .addOption(new Option('--token <token>').hideHelp())
    .option('--no-watch', 'scan the workspace in full at every snapshot (no file watcher)')
    .option(
      '--scan-in-full-up-to <files>',
      "scan a workspace of at most this many files in full at every snapshot, sooner than the watcher's 50 ms batch (default 15000; 0: never)",
    )
    .action(async (opts: ServeFlags, cmd: Command) => {
      const flags = commonFlags(cmd)
      if (opts.token !== undefined)
        throw new UsageError('--token puts the token where every local user reads it (/proc/PID/cmdline): give --token-file FILE or FORKPOINT_TOKEN', { option: '--token' })
      const { startService } = await import('../../service/httpService.js')
      const { answerClaudeHook } = await import('../../adapters/claudeCode/answerHook.js')
      const token = opts.tokenFile === undefined ? process.env['FORKPOINT_TOKEN'] || undefined : await readToken(opts.tokenFile)
      const service = await startService({
        dir: flags.dir,
        store: flags.store,
        watch: opts.watch,
        ...(opts.scanInFullUpTo === undefined ? {} : { scanInFullUpTo: wholeNumber('serve', '--scan-in-full-up-to', opts.scanInFullUpTo) }),
        allowPaths: opts.allowPath,
        allowRemotes: opts.allowRemote,
        env: process.env,
        claudeHook: answerClaudeHook,
        ...(opts.listen ? { listen: opts.listen } : {}),
        ...(token ? { token } : {}),
      })
      const stopped = stopSignal()
      if (service.recovered) process.stderr.write(`forkpoint: ${service.recovered}\n`)
      const line = flags.json
        ? JSON.stringify({ address: service.address, tokenFile: service.tokenFile })
        : `forkpoint: serving on ${service.address}${service.tokenFile ? `; every request needs the bearer token in ${service.tokenFile}` : ''}`
      process.stdout.write(`${line}\n`)
      await stopped
      await service.close()
    })
}

async function readToken(file: string): Promise<string> {
  const token = await fs.readFile(file, 'utf8').catch(() => {
    throw new InputNotFoundError(`cannot read the token file ${file}`, { path: file })
  })
  if (token.trim() === '') throw new UsageError(`the token file ${file} is empty`, { option: '--token-file', path: file })
  return token.trim()
}
