import { spawn } from 'node:child_process'
import type { ForkedContinuation } from './forkSequence.js'

/**
 * A scorer that runs `command` (with `sh -c`) per continuation, its text on stdin and
 * `FORKPOINT_CHILD` its index: the number it prints is the score; printing none, exit 0
 * scores 1 and anything else 0, as `explore --score` does.
 */
export function scoreByCommand(command: string, cwd: string): (child: ForkedContinuation) => Promise<number> {
  return (child) =>
    new Promise((resolve, reject) => {
      const proc = spawn('sh', ['-c', command], { cwd, env: { ...process.env, FORKPOINT_CHILD: String(child.index) }, stdio: ['pipe', 'pipe', 'inherit'] })
      let out = ''
      proc.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')))
      proc.on('error', reject)
      proc.on('close', (code) => {
        const printed = Number.parseFloat(out.trim())
        resolve(Number.isFinite(printed) ? printed : code === 0 ? 1 : 0)
      })
      proc.stdin.on('error', () => undefined) // a command that does not read its input
      proc.stdin.end(child.text)
    })
}
