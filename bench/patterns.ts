/**
 * `npm run bench -- patterns [--quick]`: `forkpoint explore -n 16` with a trivial command
 * over a 10,000-file workspace, against the same 16 commands run one after another in 16
 * `cp -a` copies, and run in parallel with no branching at all (the target: explore at
 * most 1.2x the latter). Also a 1-second command, to show that the overhead is fixed.
 * Rows that split the overhead: the library call with and without sandboxes, 16 sandboxes
 * with no branches (what isolation alone costs), and the CLI's own start-up.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Workspace, bestOfN } from '../src/index.js'
import { runSandboxed } from '../src/sandbox/runSandboxed.js'
import { type Row, measure, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forkpoint')
const N = 16

function sh(cmd: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) =>
    spawn('sh', ['-c', cmd], { cwd, env, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`)))),
  )
}

async function scenario(root: string, pristine: string, ws: Workspace, label: string, command: string, runs: number): Promise<Row[]> {
  const rows: Row[] = []
  const attempt = (i: number) => ({ ...process.env, FORKPOINT_ATTEMPT: String(i) })
  const parallel = await measure(() => Promise.all(Array.from({ length: N }, (_, i) => sh(command, pristine, attempt(i)))), { runs })
  const sequential = await measure(
    async () => {
      for (let i = 0; i < N; i++) {
        const copy = join(root, `copy${i}`)
        execFileSync('cp', ['-a', pristine, copy])
        await sh(command, copy, attempt(i))
      }
    },
    { runs: Math.min(runs, 3), before: () => execFileSync('sh', ['-c', `rm -rf ${root}/copy*`]) },
  )
  const cli = await measure(
    () => {
      const r = spawnSync(CLI, ['explore', '-n', String(N), '--parallel', String(N), '--', command], { cwd: ws.dir, stdio: 'ignore' })
      if (r.status !== 0) throw new Error(`forkpoint explore exited ${r.status}`)
    },
    { runs },
  )
  const library = await measure(() => bestOfN(command, { n: N, maxParallel: N }).apply(ws), { runs })
  const plain = await measure(() => bestOfN(command, { n: N, maxParallel: N, isolate: false }).apply(ws), { runs })
  const sandboxes = await measure(() => Promise.all(Array.from({ length: N }, (_, i) => runSandboxed({ view: pristine, workspace: pristine, cmd: command, env: attempt(i) }))), {
    runs,
  })
  const start = await measure(() => spawnSync(CLI, ['--version'], { stdio: 'ignore' }), { runs })
  const add = (what: string, ms: number) =>
    rows.push({ command: label, run: what, median_ms: ms, vs_parallel_no_branching: ms / parallel.median, vs_sequential_cp_a: ms / sequential.median })
  add(`forkpoint explore -n ${N} --parallel ${N} (CLI)`, cli.median)
  add(`bestOfN n=${N} (library, workspace open, sandboxed)`, library.median)
  add(`bestOfN n=${N} (library, isolate: false: plain processes in the branches)`, plain.median)
  add(`${N} commands in parallel, no branching`, parallel.median)
  add(`${N} x (cp -a + command), sequential`, sequential.median)
  add(`(split) ${N} sandboxed commands in parallel, no branching`, sandboxes.median)
  add('(split) CLI start-up: forkpoint --version', start.median)
  return rows
}

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const files = quick ? 1000 : 10_000
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-patterns-'))
  try {
    const pristine = join(root, 'pristine')
    makeFixture(pristine, { files, totalBytes: files * 2000 })
    const wsDir = join(root, 'ws')
    execFileSync('cp', ['-a', pristine, wsDir])
    const ws = await Workspace.open({ dir: wsDir })
    const rows = [
      ...(await scenario(root, pristine, ws, 'trivial: echo $FORKPOINT_ATTEMPT > out.txt', 'echo $FORKPOINT_ATTEMPT > out.txt', quick ? 2 : 5)),
      ...(await scenario(root, pristine, ws, '1 s of work: sleep 1; echo > out.txt', 'sleep 1; echo $FORKPOINT_ATTEMPT > out.txt', quick ? 1 : 3)),
    ]
    report('patterns', `explore -n ${N} over ${files.toLocaleString('en')} files (median ms; ratios against the baselines; target <= 1.2x parallel, no branching)`, rows, {
      files,
      cores: availableParallelism(),
    })
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
