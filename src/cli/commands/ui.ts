import { spawn, spawnSync } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import { common, commonFlags } from '../context.js'
import { stopSignal } from '../stopSignal.js'

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
      const { startService, webViewUrl } = await import('../../service/httpService.js')
      const service = await startService({ dir: flags.dir, store: flags.store, listen: `127.0.0.1:${opts.port ?? 0}`, readOnly: true, watch: false })
      const url = webViewUrl(service)
      const opener = opts.open ? await openInBrowser(url, service.storeRoot) : null
      const stopped = stopSignal()
      process.stdout.write(
        flags.json ? `${JSON.stringify({ schemaVersion: 1, url, opened: opener !== null })}\n` : `forkpoint: the web view is at ${url} (read-only; Ctrl-C stops it)\n`,
      )
      await stopped
      if (opener) await fs.rm(opener, { force: true })
      await service.close()
    })
}

/**
 * Only where a display exists and xdg-open is there to find the user's browser; the URL is
 * printed in any case. The browser is given a file of the store's owner alone (0600) that
 * leads to the URL, never the URL itself: an opener's command line is readable by every
 * local user, and the URL carries the token (as Jupyter opens its redirect file). Returns
 * that file, removed when the view stops, or null when nothing was opened.
 */
async function openInBrowser(url: string, storeRoot: string): Promise<string | null> {
  if (!process.env['DISPLAY'] && !process.env['WAYLAND_DISPLAY']) return null
  if (spawnSync('sh', ['-c', 'command -v xdg-open'], { stdio: 'ignore' }).status !== 0) return null
  const file = join(storeRoot, `ui-${new URL(url).port}.html`)
  await fs.rm(file, { force: true })
  await fs.writeFile(file, redirectPage(url), { mode: 0o600, flag: 'wx' })
  spawn('xdg-open', [file], { stdio: 'ignore', detached: true })
    .on('error', () => {}) // the printed URL is the way in whatever the opener does
    .unref()
  return file
}

const redirectPage = (url: string): string =>
  `<!doctype html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0;url=${url}">\n<title>forkpoint</title>\n<a href="${url}">the web view</a>\n`
