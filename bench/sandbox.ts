/**
 * `npm run bench -- sandbox [runs]`: a sandboxed `true` through the library (`runSandboxed`:
 * the runtime's new root, namespaces, seccomp filter) beside bubblewrap's
 * `bwrap --unshare-all --new-session --ro-bind / / true`, both spawned from this Node
 * process, their runs interleaved. Default 50 runs each. The target: the library within
 * bwrap's time + 3 ms.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runSandboxed } from '../src/sandbox/runSandboxed.js'
import { compare, report } from './harness.js'

const BWRAP = ['--unshare-all', '--new-session', '--ro-bind', '/', '/', 'true']

function bwrapTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bwrap', BWRAP, { stdio: 'ignore' })
    child.once('error', reject)
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`bwrap exited ${code}`))))
  })
}

async function libraryTrue(dir: string): Promise<void> {
  const r = await runSandboxed({ view: dir, workspace: dir, cmd: ['true'] })
  if (r.exitCode !== 0) throw new Error(`sandboxed true failed: ${r.stderr}`)
}

export async function main(args: string[]): Promise<void> {
  const runs = Number(args[0] ?? 50)
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-sandbox-'))
  const { a, b, fastest } = await compare({ run: () => libraryTrue(dir) }, { run: bwrapTrue }, { runs, warmup: 3 })
  report('sandbox', `Sandboxed \`true\`, median of ${runs} interleaved runs, as ${process.getuid?.() === 0 ? 'root' : 'an unprivileged user'}`, [
    { 'sandboxed `true`': 'library (runSandboxed)', 'median (ms)': a, 'fastest (ms)': fastest.a },
    { 'sandboxed `true`': `bwrap ${BWRAP.join(' ')}`, 'median (ms)': b, 'fastest (ms)': fastest.b },
    { 'sandboxed `true`': 'library − bwrap (target ≤ 3 ms)', 'median (ms)': a - b, 'fastest (ms)': fastest.a - fastest.b },
  ])
}
