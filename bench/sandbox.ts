/**
 * `npm run bench -- sandbox [runs]`: a sandboxed `true` through the library (`runSandboxed`:
 * the runtime's new root, namespaces, seccomp filter) beside bubblewrap's
 * `bwrap --unshare-all --new-session --ro-bind / / true`, both spawned from this Node
 * process, their runs interleaved. Default 50 runs each. The target: the library within
 * bwrap's time + 3 ms. Then what an effects policy adds: the same `true` with a network of
 * its own leading to the egress proxy (routes, NAT rules, the relay), against plain.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import { WORKSPACE_CONTEXT } from '../src/effects/contextLedger.js'
import { withEgressEffects } from '../src/effects/withHttpEffects.js'
import { type EgressProxy, runSandboxed } from '../src/sandbox/runSandboxed.js'
import { openStore } from '../src/store/findStore.js'
import { initWorkspace } from '../src/store/initStore.js'
import { compare, report } from './harness.js'

const BWRAP = ['--unshare-all', '--new-session', '--ro-bind', '/', '/', 'true']

function bwrapTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bwrap', BWRAP, { stdio: 'ignore' })
    child.once('error', reject)
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`bwrap exited ${code}`))))
  })
}

async function libraryTrue(dir: string, net?: EgressProxy): Promise<void> {
  const r = await runSandboxed({ view: dir, workspace: dir, cmd: ['true'], ...(net ? { net } : {}) })
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
    ...(await underPolicy(dir, runs)),
  ])
}

/** Rows for the same `true` under an effects policy (its own network to the egress proxy), beside plain. */
async function underPolicy(dir: string, runs: number) {
  await initWorkspace({ dir })
  const { store } = await openStore({ dir })
  writeFileSync(store.path('effects.json'), JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
  const measured = await withEgressEffects({ store, context: WORKSPACE_CONTEXT, env: process.env }, (net) =>
    compare({ run: () => libraryTrue(dir, net!) }, { run: () => libraryTrue(dir) }, { runs, warmup: 3 }),
  )
  return [
    { 'sandboxed `true`': 'library under an effects policy (own network, egress proxy)', 'median (ms)': measured.a, 'fastest (ms)': measured.fastest.a },
    { 'sandboxed `true`': 'library, no network (same run)', 'median (ms)': measured.b, 'fastest (ms)': measured.fastest.b },
    { 'sandboxed `true`': 'cost of the egress network', 'median (ms)': measured.a - measured.b, 'fastest (ms)': measured.fastest.a - measured.fastest.b },
  ]
}
