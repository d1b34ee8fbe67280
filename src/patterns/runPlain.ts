import { spawn } from 'node:child_process'
import type { Branch } from '../branch/Branch.js'
import { exitStatus } from '../util/exitStatus.js'
import { PlainProcessTree } from './PlainProcessTree.js'
import type { CommandValue } from './runCandidate.js'

/**
 * `isolate: false`: run a command as a plain process (its own process group) with the
 * branch directory as its working directory. It settles once every process of the run is
 * gone: when the first one exits, or on abort, the rest are killed (a candidate leaves no
 * process behind, not even a backgrounded one) and waited for.
 */
export async function runPlain(cmd: string | string[], { branch, env, signal }: { branch: Branch; env: NodeJS.ProcessEnv; signal: AbortSignal }): Promise<CommandValue> {
  const [file, ...args] = typeof cmd === 'string' ? ['sh', '-c', cmd] : cmd
  const started = performance.now()
  const tree = new PlainProcessTree()
  const child = spawn(file!, args, { cwd: branch.path, env: tree.environment(env), detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  tree.started(child.pid)
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout.on('data', (c: Buffer) => out.push(c))
  child.stderr.on('data', (c: Buffer) => err.push(c))
  const closed = new Promise((resolve) => child.once('close', resolve))
  const exited = new Promise<{ code: number | null; sig: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, sig) => resolve({ code, sig }))
  })
  const kill = () => tree.kill()
  if (signal.aborted) kill()
  else signal.addEventListener('abort', kill, { once: true })
  try {
    const { code, sig } = await exited
    await tree.end()
    await closed // every writer is gone: the pipes hold all there is
    const changedPaths = (await branch.changes()).map((c) => c.path)
    return {
      exitCode: exitStatus(code, sig),
      stdout: Buffer.concat(out).toString('utf8'),
      stderr: Buffer.concat(err).toString('utf8'),
      changedPaths,
      durationMs: performance.now() - started,
    }
  } finally {
    signal.removeEventListener('abort', kill)
    await tree.end()
  }
}
