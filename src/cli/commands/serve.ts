import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'

export function registerServe(program: Command): void {
  common(program.command('serve'))
    .description(
      "serve the workspace's operations as JSON endpoints (POST /v1/<operation>, GET /openapi.json) on a Unix socket in the store, keeping the workspace warm with a file watcher",
    )
    .option('--listen <address>', 'unix:PATH or HOST:PORT (default: unix:<store>/service.sock); any address but a socket or loopback needs --token')
    .option('--token <token>', 'bearer token every request must carry (default: $FORKPOINT_SERVICE_TOKEN)')
    .option('--no-watch', 'scan the workspace in full at every snapshot (no file watcher)')
    .action(async (opts: { listen?: string; token?: string; watch: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { startService } = await import('../../service/httpService.js')
      const token = opts.token ?? process.env['FORKPOINT_SERVICE_TOKEN']
      const service = await startService({ dir: flags.dir, store: flags.store, watch: opts.watch, ...(opts.listen ? { listen: opts.listen } : {}), ...(token ? { token } : {}) })
      const line = flags.json
        ? JSON.stringify({ address: service.address, token: token !== undefined })
        : `forkpoint: serving on ${service.address}${token ? '; every request needs the bearer token' : ''}`
      process.stdout.write(`${line}\n`)
      await new Promise<void>((resolve) => {
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, resolve)
      })
      await service.close()
    })
}
