import { spawn, spawnSync } from 'node:child_process'
import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import { common, commonFlags } from '../context.js'

export function registerUi(program: Command): void {
  common(program.command('ui'))
    .description(
      'serve a read-only web view of the store (the image graph, live branches, runs side by side, explorations) on 127.0.0.1, print its URL and open it in a browser when there is a display',
    )
    .option('--port <n>', 'the port (default: a free one)', (v) => Number.parseInt(v, 10))
    .option('--no-open', 'do not open a browser')
    .action(async (opts: { port?: number; open: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      if (opts.port !== undefined && !(Number.isInteger(opts.port) && opts.port >= 0 && opts.port < 65536))
        throw new UsageError('--port takes a port number, 0 to 65535', { option: '--port' })
      const { startService } = await import('../../service/httpService.js')
      const service = await startService({ dir: flags.dir, store: flags.store, listen: `127.0.0.1:${opts.port ?? 0}`, readOnly: true, watch: false })
      const url = `${service.address}/ui/`
      const opened = opts.open && openInBrowser(url)
      process.stdout.write(flags.json ? `${JSON.stringify({ schemaVersion: 1, url, opened })}\n` : `forkpoint: the web view is at ${url} (read-only; Ctrl-C stops it)\n`)
      await new Promise<void>((resolve) => {
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, resolve)
      })
      await service.close()
    })
}

/** Only where a display exists and xdg-open is there to find the user's browser; the URL is printed in any case. */
function openInBrowser(url: string): boolean {
  if (!process.env['DISPLAY'] && !process.env['WAYLAND_DISPLAY']) return false
  if (spawnSync('sh', ['-c', 'command -v xdg-open'], { stdio: 'ignore' }).status !== 0) return false
  spawn('xdg-open', [url], { stdio: 'ignore', detached: true })
    .on('error', () => {}) // the printed URL is the way in whatever the opener does
    .unref()
  return true
}
