import type cliProgressType from 'cli-progress'
import type { TransferProgress } from '../registry/transport/TransferProgress.js'
import { formatBytes } from '../operations/text/format.js'
import { loadCliProgress } from './progress.js'

/**
 * A byte progress bar with rate for push and pull, on stderr when it is a terminal (and
 * not under --json); silent otherwise. Call `stop()` when the transfer is over.
 */
export function transferBar(json: boolean): { onProgress?: (p: TransferProgress) => void; stop(): void } {
  if (json || !process.stderr.isTTY) return { stop() {} }
  let bar: cliProgressType.SingleBar | null = null
  let phase = ''
  const started = Date.now()
  return {
    onProgress(p) {
      if (p.phase !== phase) {
        bar?.stop()
        phase = p.phase
        const cliProgress = loadCliProgress()
        bar = new cliProgress.SingleBar(
          { format: `${p.phase} [{bar}] {done}/{size} {rate} {objects}/{totalObjects} objects`, stream: process.stderr, clearOnComplete: true },
          cliProgress.Presets.shades_classic,
        )
        bar.start(Math.max(p.totalBytes, 1), 0)
      }
      const seconds = Math.max((Date.now() - started) / 1000, 0.001)
      bar!.update(p.bytes, {
        done: formatBytes(p.bytes),
        size: formatBytes(p.totalBytes),
        rate: `${formatBytes(Math.round(p.bytes / seconds))}/s`,
        objects: p.objects,
        totalObjects: p.totalObjects,
      })
    },
    stop() {
      bar?.stop()
    },
  }
}
