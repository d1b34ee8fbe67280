/**
 * `npm run bench -- store [--quick] [--only 10k|100k]`: snapshots, status and checkout of a
 * generated workspace (10,000 files / ~100 MB, and 100,000 small files), against git and cp
 * -a in the same run (checkout against cp -a with a sha256sum of every file); the warm CLI
 * snapshot also with the store's service running (`forkpoint serve`, which the CLI asks), and
 * with the service taking its file watcher's list rather than scanning in full.
 * Ratios are what the targets speak of, with the CPU time of both sides (a busy machine's
 * waiting does not add to it); this machine is noisy.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Store, checkout, snapshotWorkspace, status } from '../src/index.js'
import { type Row, compare, interleave, measure, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forkpoint')
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=b@x', '-c', 'gc.auto=0', ...args], { cwd, stdio: 'ignore' })
const sh = (cmd: string, cwd: string) => execFileSync('bash', ['-c', cmd], { cwd, stdio: 'ignore' })
const cli = (cwd: string, ...args: string[]) => {
  const r = spawnSync(CLI, args, { cwd, stdio: 'ignore' })
  if (r.status !== 0) throw new Error(`forkpoint ${args.join(' ')} exited ${r.status}`)
}

/** `forkpoint serve [flags]` in `ws` until `fn` is done, started once its socket is there. */
async function whileServing<T>(ws: string, fn: () => Promise<T>, flags: string[] = []): Promise<T> {
  const serve: ChildProcess = spawn(CLI, ['serve', ...flags], { cwd: ws, stdio: 'ignore' })
  try {
    for (let waited = 0; !existsSync(join(ws, '.forkpoint', 'service.sock')); waited += 50) {
      if (waited > 120_000 || serve.exitCode !== null) throw new Error(`forkpoint serve did not start in ${ws}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return await fn()
  } finally {
    const exited = new Promise((resolve) => serve.once('exit', resolve))
    if (serve.exitCode === null && serve.kill()) await exited
  }
}

async function scenario(label: string, files: number, totalBytes: number, runs: number): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-store-'))
  try {
    const src = join(root, 'src')
    makeFixture(src, { files, totalBytes })
    const fp = join(root, 'fp')
    const gw = join(root, 'git')
    sh(`cp -a src fp && cp -a src git`, root)
    const rows: Row[] = []
    const add = (op: string, forkpoint: number, baselineName: string, baseline: number, target: string) =>
      rows.push({ workspace: label, operation: op, forkpoint_ms: forkpoint, baseline: baselineName, baseline_ms: baseline, ratio: forkpoint / baseline, target })
    const withCpu = (r: Record<string, { cpu: number }>) => Object.assign(rows.at(-1)!, { forkpoint_cpu_ms: r['forkpoint']!.cpu, baseline_cpu_ms: r['git']!.cpu })

    const gitCommit = (dir: string, msg: string) => () => sh(`git add -A && git -c user.name=b -c user.email=b@x commit -qm ${msg}`, dir)

    // cold: a fresh store / repository every run
    const cold = await compare(
      {
        run: () => snapshotWorkspace({ dir: fp, message: 'cold' }),
        before: async () => {
          rmSync(join(fp, '.forkpoint'), { recursive: true, force: true })
          await Store.init(join(fp, '.forkpoint'))
        },
      },
      {
        run: gitCommit(gw, 'cold'),
        before: () => {
          rmSync(join(gw, '.git'), { recursive: true, force: true })
          git(gw, 'init', '-q')
          git(gw, 'config', 'gc.auto', '0')
        },
      },
      { runs, warmup: 0 },
    )
    add('cold snapshot (library)', cold.a, 'git add -A && git commit', cold.b, '<= 0.35x')

    // warm: change one file, snapshot again
    let n = 0
    const touch = (dir: string) => () => appendFileSync(join(dir, 'd0', 's0', 'f0.txt'), `change ${++n}\n`)
    const warm = await compare(
      { run: () => snapshotWorkspace({ dir: fp, message: 'warm' }), before: touch(fp) },
      { run: gitCommit(gw, 'warm'), before: touch(gw) },
      { runs: runs * 2 },
    )
    add('warm snapshot, 1 file changed (library)', warm.a, 'git add -A && git commit', warm.b, '<= 1.0x')
    const warmCliSteps = { forkpoint: { run: () => cli(fp, 'snapshot', '-m', 'warm'), before: touch(fp) }, git: { run: gitCommit(gw, 'warm'), before: touch(gw) } }
    const warmCli = await interleave(warmCliSteps, { runs: runs * 2 })
    add('warm snapshot, 1 file changed (CLI)', warmCli['forkpoint']!.median, 'git add -A && git commit', warmCli['git']!.median, '<= 2.0x')
    withCpu(warmCli)
    const served = await whileServing(fp, () => interleave(warmCliSteps, { runs: runs * 2 }))
    add('warm snapshot, 1 file changed (CLI, forkpoint serve running)', served['forkpoint']!.median, 'git add -A && git commit', served['git']!.median, '<= 2.0x')
    withCpu(served) // the CLI's own: the service's is not counted
    // the service taking the watcher's list, which waits out its 50 ms batch, rather than scanning in full
    const listed = await whileServing(fp, () => interleave(warmCliSteps, { runs: runs * 2 }), ['--scan-in-full-up-to', '0'])
    add("the same, the service taking the watcher's list (serve --scan-in-full-up-to 0)", listed['forkpoint']!.median, 'git add -A && git commit', listed['git']!.median, '-')
    withCpu(listed)
    // the floor under every CLI row: Node starting and exiting, nothing loaded (no target, so
    // against the CLI row's git baseline rather than git again)
    const nodeStart = await measure(() => execFileSync('node', ['-e', '0']), { runs: runs * 2 })
    add("Node's start-up alone (node -e 0)", nodeStart.median, 'git add -A && git commit', warmCli['git']!.median, '-')

    // status with one change pending
    touch(fp)()
    touch(gw)()
    const gitStatus = () => git(gw, 'status', '--porcelain')
    const st = await compare({ run: () => status({ dir: fp }) }, { run: gitStatus }, { runs: runs * 2 })
    add('status (library)', st.a, 'git status', st.b, '-')
    const stCli = await compare({ run: () => cli(fp, 'status') }, { run: gitStatus }, { runs: runs * 2 })
    add('status (CLI)', stCli.a, 'git status', stCli.b, '-')

    // checkout into a new directory vs cp -a of the same tree and a sha256sum of every file
    // copied: checkout verifies every object it reads, so the fair baseline reads and hashes too
    const out = join(root, 'out')
    const clear = () => rmSync(out, { recursive: true, force: true })
    const copyAndHash = () => sh(`cp -a src out && find out -type f -print0 | xargs -0 sha256sum >/dev/null`, root)
    const co = await compare({ run: () => checkout({ dir: fp, id: 'HEAD', into: out }), before: clear }, { run: copyAndHash, before: clear }, { runs })
    add('checkout --into new dir', co.a, 'cp -a + sha256sum of every file', co.b, '<= 1.0x')

    // unchanged workspace: no new object, same tree
    const store = await Store.open(join(fp, '.forkpoint'))
    const count = () => Number(execFileSync('bash', ['-c', `find ${store.path('objects')} -type f | wc -l`]).toString())
    await snapshotWorkspace({ dir: fp, message: 'settle' })
    const before = count()
    const again = await snapshotWorkspace({ dir: fp, message: 'unchanged' })
    rows.push({
      workspace: label,
      operation: 'snapshot of unchanged workspace',
      forkpoint_ms: 0,
      baseline: 'new objects written',
      baseline_ms: count() - before,
      ratio: again.created ? 1 : 0,
      target: '0 objects, same id',
    })
    return rows
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** `--quick`: small trees for a smoke run; `--only 10k|100k`: one of the two workspaces. */
export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : null
  const rows = [
    ...(only !== '100k' ? await scenario('10k files / 100 MB', quick ? 1000 : 10_000, quick ? 10e6 : 100e6, quick ? 2 : 5) : []),
    ...(only !== '10k' ? await scenario('100k small files', quick ? 5000 : 100_000, quick ? 5e6 : 100e6 / 10, quick ? 1 : 2) : []),
  ]
  report('store', 'forkpoint store vs git and cp -a (median ms; ratio = forkpoint / baseline)', rows)
}
