import type cliProgressType from 'cli-progress'
import { requirePackage } from '../util/requirePackage.js'

/**
 * A progress callback that draws a bar on stderr when it is a terminal (and not under
 * --json), and does nothing otherwise. Call `stop()` when the work is done.
 */
export function progressBar(label: string, json: boolean): { onProgress?: (done: number, total: number) => void; stop(): void } {
  if (json || !process.stderr.isTTY) return { stop() {} }
  let bar: cliProgressType.SingleBar | null = null
  return {
    onProgress(done, total) {
      if (!bar) {
        const cliProgress = loadCliProgress()
        bar = new cliProgress.SingleBar(
          { format: `${label} [{bar}] {value}/{total} {eta_formatted}`, stream: process.stderr, clearOnComplete: true },
          cliProgress.Presets.shades_classic,
        )
        bar.start(total, 0)
      }
      bar.update(done)
    },
    stop() {
      bar?.stop()
    },
  }
}

/** cli-progress, loaded only when a bar is really drawn: most runs have no terminal. */
export function loadCliProgress(): typeof cliProgressType {
  return requirePackage('cli-progress') as typeof cliProgressType
}
