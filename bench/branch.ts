/**
 * `npm run bench -- branch [sizes...] [--overlay-only] [--cli-only]`: branch creation, a
 * 1-file change + commit, abort and a sandboxed `true`, per backend available here, against
 * `cp -a` and `git worktree add` on the same workspaces. Default sizes 1000 10000 100000
 * files; `--overlay-only` times just the overlay backend (no baselines), for a quick
 * check; `--cli-only` just `forkpoint branch NAME` against `forkpoint --version`.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Workspace } from '../src/index.js'
import type { BackendName } from '../src/index.js'
import { type Row, report } from './harness.js'

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const now = () => performance.now()

function makeFiles(dir: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `d${Math.floor(i / 1000)}`)
    if (i % 1000 === 0) mkdirSync(sub, { recursive: true })
    writeFileSync(join(sub, `f${i}.txt`), `file ${i}\n${'x'.repeat(200)}\n`)
  }
}

async function timeBackend(parent: string, files: number, backend: BackendName, runs: number): Promise<Row> {
  const dir = mkdtempSync(join(parent, `ws-${backend}-`))
  makeFiles(dir, files)
  const ws = await Workspace.open({ dir, backend })
  let t = now()
  await (await ws.branch('first')).abort() // scans the workspace and builds the shared base view
  const first = now() - t
  const create: number[] = []
  const abort: number[] = []
  const run: number[] = []
  for (let i = 0; i < runs + 1; i++) {
    t = now()
    const b = await ws.branch(`b${i}`)
    const created = now() - t
    const r = await b.run(['true'])
    if (r.exitCode !== 0) throw new Error(`sandboxed true failed: ${r.stderr}`)
    t = now()
    await b.abort()
    if (i === 0) continue // warm-up
    abort.push(now() - t)
    create.push(created)
    run.push(r.durationMs)
  }
  const commit: number[] = []
  const afterCommit: number[] = []
  for (let i = 0; i < runs; i++) {
    t = now()
    const c = await ws.branch(`c${i}`) // after a commit: the committed paths scanned again, the base view advanced
    if (i > 0) afterCommit.push(now() - t)
    writeFileSync(join(c.path, 'd0', 'f0.txt'), `changed ${i}\n`)
    t = now()
    await c.commit()
    commit.push(now() - t)
  }
  rmSync(dir, { recursive: true, force: true })
  return {
    files,
    method: `forkpoint ${backend}`,
    'first branch (ms)': first,
    'create (ms)': median(create),
    '1-file commit (ms)': median(commit),
    'abort (ms)': median(abort),
    'sandboxed true (ms)': median(run),
    'branch after a commit (ms)': median(afterCommit),
  }
}

function timeBaseline(parent: string, files: number, runs: number): Row[] {
  const dir = mkdtempSync(join(parent, 'ws-base-'))
  makeFiles(dir, files)
  const cp: number[] = []
  const wt: number[] = []
  for (let i = 0; i < runs; i++) {
    const dest = join(parent, `copy-${i}`)
    const t = now()
    execFileSync('cp', ['-a', dir, dest])
    cp.push(now() - t)
    rmSync(dest, { recursive: true, force: true })
  }
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'gc.auto=0', '-c', 'maintenance.auto=false', ...args], { stdio: 'ignore' })
  git('init', '-q')
  git('add', '-A')
  git('-c', 'user.email=b@b', '-c', 'user.name=bench', 'commit', '-qm', 'base')
  for (let i = 0; i < runs; i++) {
    const t = now()
    git('worktree', 'add', '-q', '--detach', join(parent, `wt-${i}`))
    wt.push(now() - t)
    git('worktree', 'remove', '--force', join(parent, `wt-${i}`))
  }
  rmSync(dir, { recursive: true, force: true })
  const none = { 'first branch (ms)': '—', 'create (ms)': 0, '1-file commit (ms)': '—', 'abort (ms)': '—', 'sandboxed true (ms)': '—', 'branch after a commit (ms)': '—' }
  return [
    { files, method: 'cp -a', ...none, 'create (ms)': median(cp) },
    { files, method: 'git worktree add', ...none, 'create (ms)': median(wt) },
  ]
}

const CLI = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'bin', 'forkpoint')

/**
 * `forkpoint branch NAME` from the CLI against `forkpoint --version` (the CLI's start),
 * interleaved; each branch aborted untimed. "Beyond" is the median of each pair's
 * difference, so a machine whose speed drifts weighs on both sides of it alike.
 */
function timeCliBranch(parent: string, files: number, runs: number): Row[] {
  const dir = mkdtempSync(join(parent, 'ws-cli-'))
  makeFiles(dir, files)
  const cli = (...args: string[]) => execFileSync(CLI, args, { cwd: dir, stdio: 'ignore' })
  cli('init')
  cli('branch', 'warm')
  cli('abort', 'warm')
  const version: number[] = []
  const branch: number[] = []
  for (let i = 0; i < runs * 2 + 1; i++) {
    let t = now()
    cli('--version')
    version.push(now() - t)
    t = now()
    cli('branch', `cli${i}`)
    branch.push(now() - t)
    cli('abort', `cli${i}`)
  }
  rmSync(dir, { recursive: true, force: true })
  const none = { 'first branch (ms)': '—', '1-file commit (ms)': '—', 'abort (ms)': '—', 'sandboxed true (ms)': '—', 'branch after a commit (ms)': '—' }
  return [
    { files, method: 'forkpoint branch NAME (CLI)', ...none, 'create (ms)': median(branch) },
    { files, method: 'forkpoint --version (CLI start)', ...none, 'create (ms)': median(version) },
    { files, method: 'CLI branch beyond CLI start, median of pairs (target <= 20 ms)', ...none, 'create (ms)': median(branch.map((b, i) => b - version[i]!)) },
  ]
}

function xfsMount(): { dir: string; cleanup(): void } | null {
  if (process.getuid?.() !== 0) return null
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-xfs-'))
  execFileSync('truncate', ['-s', '4G', join(root, 'img')])
  execFileSync('mkfs.xfs', ['-q', '-m', 'reflink=1', join(root, 'img')])
  mkdirSync(join(root, 'mnt'))
  execFileSync('mount', ['-o', 'loop', join(root, 'img'), join(root, 'mnt')])
  return { dir: join(root, 'mnt'), cleanup: () => (execFileSync('umount', [join(root, 'mnt')]), rmSync(root, { recursive: true, force: true })) }
}

export async function main(args: string[]): Promise<void> {
  const overlayOnly = args.includes('--overlay-only')
  const cliOnly = args.includes('--cli-only')
  const given = args.filter((a) => !a.startsWith('--')).map(Number)
  const sizes = given.length > 0 ? given : [1000, 10_000, 100_000]
  const parent = mkdtempSync(join(tmpdir(), 'fp-bench-branch-'))
  const xfs = overlayOnly || cliOnly ? null : xfsMount()
  const rows: Row[] = []
  try {
    for (const files of sizes) {
      const runs = files >= 100_000 ? 5 : 9
      if (!cliOnly) rows.push(await timeBackend(parent, files, 'overlay', runs))
      rows.push(...timeCliBranch(parent, files, runs))
      if (cliOnly) continue
      if (xfs) rows.push(await timeBackend(xfs.dir, files, 'reflink', files >= 100_000 ? 3 : runs))
      if (!overlayOnly) rows.push(await timeBackend(parent, files, 'copy', files >= 100_000 ? 3 : runs))
      if (!overlayOnly) rows.push(...timeBaseline(parent, files, files >= 100_000 ? 3 : 5))
      console.error(`done ${files} files`)
    }
  } finally {
    xfs?.cleanup()
    rmSync(parent, { recursive: true, force: true })
  }
  const who = process.getuid?.() === 0 ? 'root' : 'an unprivileged user (overlay in a user namespace)'
  report(
    cliOnly ? 'branch-cli' : 'branch',
    `Branches, medians in ms, as ${who}; "first branch" = first scan (hashing every file) + shared base view; "branch after a commit" = the commit's paths scanned again + the base view advanced at them`,
    rows,
  )
}
