import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import type { Branch } from '../branch/Branch.js'
import type { CommandValue } from './runCandidate.js'

/**
 * `isolate: false`: run a command as a plain process (its own process group) with the
 * branch directory as its working directory. Abort kills the whole group.
 */
export function runPlain(cmd: string | string[], { branch, env, signal }: { branch: Branch; env: NodeJS.ProcessEnv; signal: AbortSignal }): Promise<CommandValue> {
  const [file, ...args] = typeof cmd === 'string' ? ['sh', '-c', cmd] : cmd
  const started = performance.now()
  const child = spawn(file!, args, { cwd: branch.path, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout.on('data', (c: Buffer) => out.push(c))
  child.stderr.on('data', (c: Buffer) => err.push(c))
  const kill = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // the group is already gone
    }
  }
  signal.addEventListener('abort', kill, { once: true })
  return new Promise((resolve, reject) => {
    child.once('error', (e) => {
      signal.removeEventListener('abort', kill)
      reject(e)
    })
    child.once('close', async (code, sig) => {
      signal.removeEventListener('abort', kill)
      kill() // a candidate leaves no process behind, not even a backgrounded one
      try {
        const changedPaths = (await branch.changes()).map((c) => c.path)
        resolve({ exitCode: code ?? 128 + (constants.signals[sig!] ?? 9), stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), changedPaths, durationMs: performance.now() - started })
      } catch (e) {
        reject(e)
      }
    })
  })
}
