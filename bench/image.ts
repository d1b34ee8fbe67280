/**
 * `npm run bench -- image`: forking and merging images, each beside its baseline in the same
 * run: `fork -n 100` (library and CLI) against git creating 100 branches in one
 * `update-ref --stdin`; `fork -n 100 --materialize` of a 10k-file image against
 * `git worktree add`; the merge of two images of a 10k-file workspace (10 files changed on
 * each side) against `git merge` of the same two histories; the line-level merge of text
 * files both sides changed against `git merge-file --diff3` run on each file.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { forkImage } from '../src/image/forkImage.js'
import { merge } from '../src/image/merge.js'
import { mergeImages } from '../src/image/mergeImages.js'
import { abortNamedBranch } from '../src/branch/lifecycle/abortNamedBranch.js'
import { ensureBaseDir } from '../src/branch/mount/baseDir.js'
import { readSnapshot } from '../src/world/tree/readObjects.js'
import { checkout, initWorkspace, openStore, snapshotWorkspace } from '../src/index.js'
import { updateRef } from '../src/store/refs.js'
import { mergeLines } from '../src/world/merge/mergeLines.js'
import { type Row, compare, measure, report } from './harness.js'
import { makeFixture } from './workspaceFixture.js'

const BIG = { files: 10_000, totalBytes: 20_000_000 }
const gitIn = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=b@x', '-c', 'gc.auto=0', ...args], { cwd, stdio: 'ignore' })

const FILES = 1000
const LINES = 200

/** A file of distinct code-like lines, and two sides that each change a different tenth of it. */
function versions(file: number): { base: Buffer; ours: Buffer; theirs: Buffer } {
  const base = Array.from({ length: LINES }, (_, i) => `  const value${i} = compute(${file}, ${i}) // line ${i}\n`)
  const ours = base.map((line, i) => (i % 20 === 3 ? line.replace('compute', 'computeFast') : line))
  const theirs = base.map((line, i) => (i % 20 === 13 ? line.replace('// line', '// checked line') : line))
  return { base: Buffer.from(base.join('')), ours: Buffer.from(ours.join('')), theirs: Buffer.from(theirs.join('')) }
}

const CHILDREN = 100
const CLI = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'bin', 'forkpoint')

async function forkRows(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-fork-'))
  try {
    writeFileSync(join(dir, 'a.txt'), 'hello\n')
    await initWorkspace({ dir })
    const { id } = await snapshotWorkspace({ dir, message: 'base' })
    const { store } = await openStore({ dir })
    const git = (...args: string[]) => spawnSync('git', ['-C', dir, ...args])
    git('init', '-q')
    git('-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '--allow-empty', '-m', 'base')
    const head = git('rev-parse', 'HEAD').stdout.toString().trim()
    let round = 0
    const library = await measure(() => forkImage({ store, id, n: CHILDREN }), { runs: 5 })
    const cli = await measure(() => spawnSync(CLI, ['fork', id, '-n', String(CHILDREN)], { cwd: dir }), { runs: 5 })
    const branches = await measure(
      () => {
        round++
        const input = Array.from({ length: CHILDREN }, (_, i) => `create refs/heads/fork-${round}-${i} ${head}\n`).join('')
        spawnSync('git', ['-C', dir, 'update-ref', '--stdin'], { input })
      },
      { runs: 5 },
    )
    const perChild = (ms: number) => ms / CHILDREN
    return [
      {
        operation: `fork -n ${CHILDREN}`,
        tool: 'forkImage (library)',
        'ms per child': perChild(library.median),
        'cpu ms per child': perChild(library.cpu),
        'vs git': library.median / branches.median,
        target: '< 2 ms per child',
      },
      {
        operation: `fork -n ${CHILDREN}`,
        tool: 'forkpoint fork (CLI, Node start included)',
        'ms per child': perChild(cli.median),
        'cpu ms per child': perChild(cli.cpu),
        'vs git': cli.median / branches.median,
        target: '',
      },
      {
        operation: `fork -n ${CHILDREN}`,
        tool: `git update-ref --stdin (${CHILDREN} new branches)`,
        'ms per child': perChild(branches.median),
        'cpu ms per child': perChild(branches.cpu),
        'vs git': 1,
        target: '',
      },
    ]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `fork -n 100 --materialize` of a 10k-file image: the first (cold, or advancing the last image's base view) and the next ones; baseline `git worktree add` per child. */
async function materializeRows(): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-materialize-'))
  try {
    const dir = join(root, 'fp')
    const gw = join(root, 'git')
    makeFixture(dir, { ...BIG, seed: 7 })
    makeFixture(gw, { ...BIG, seed: 7 })
    await initWorkspace({ dir })
    const { store } = await openStore({ dir })
    gitIn(gw, 'init', '-q')
    gitIn(gw, 'add', '-A')
    gitIn(gw, 'commit', '-qm', 'image')
    let id = ''
    let made: string[] = []
    const fork = (persistent: boolean) => async () => {
      made = (await forkImage({ store, dir, id, n: CHILDREN, materialize: true, persistent })).map((c) => c.branch!.name)
    }
    const abortAll = async () => {
      for (const name of made) await abortNamedBranch({ dir, store, name })
      made = []
    }
    // each first fork is of a new image (one file changed), whose base view no fork has built yet
    let images = 0
    const newImage = async () => {
      await abortAll()
      change(dir, [images], `image ${images}`)
      id = (await snapshotWorkspace({ dir, message: `image ${images++}` })).id
    }
    // cold: no base view to start from (as in a new store), so the image's is built whole
    const cold = await measure(fork(false), {
      runs: 5,
      warmup: 0,
      before: async () => {
        await newImage()
        removeSettled(join(store.root, 'branches', 'bases'))
      },
    })
    // the loop of an agent: the last image's view, no longer used, is changed into the new one's
    const first = await measure(fork(false), { runs: 5, warmup: 0, before: newImage })
    await abortAll()
    const next = await measure(fork(false), { runs: 5, warmup: 0, before: abortAll })
    await abortAll()
    const persistent = await measure(fork(true), { runs: 3, warmup: 0, before: abortAll })
    await abortAll()
    let worktree = 0
    const git = await measure(() => gitIn(gw, 'worktree', 'add', '-q', '--detach', join(root, `wt${worktree++}`), 'HEAD'), { runs: 3, warmup: 0 })
    const perChild = (ms: number) => ms / CHILDREN
    const op = `fork -n ${CHILDREN} --materialize, ${BIG.files} files`
    return [
      {
        operation: op,
        tool: 'forkImage (library), first fork of an image, no base view to start from (built whole; median of 5 images)',
        'ms per child': perChild(cold.median),
        'cpu ms per child': perChild(cold.cpu),
        'vs git': perChild(cold.median) / git.median,
        target: '< 5 ms per child',
      },
      {
        operation: op,
        tool: "forkImage (library), first fork of an image one file away from the last forked (that one's view changed into its; median of 5)",
        'ms per child': perChild(first.median),
        'cpu ms per child': perChild(first.cpu),
        'vs git': perChild(first.median) / git.median,
        target: '< 5 ms per child',
      },
      {
        operation: op,
        tool: 'forkImage (library), base view already there',
        'ms per child': perChild(next.median),
        'cpu ms per child': perChild(next.cpu),
        'vs git': perChild(next.median) / git.median,
        target: '< 5 ms per child',
      },
      {
        operation: op,
        tool: 'forkImage persistent (as the CLI makes them: a namespace holder process each)',
        'ms per child': perChild(persistent.median),
        'cpu ms per child': perChild(persistent.cpu),
        'vs git': perChild(persistent.median) / git.median,
        target: '',
      },
      { operation: op, tool: 'git worktree add --detach (one per child)', 'ms per child': git.median, 'cpu ms per child': git.cpu, 'vs git': 1, target: '' },
    ]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** The one-time part of a first fork: an image's base view built whole (no view to start from), beside `cp -al` of the same files. */
async function baseDirRows(): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-baseview-'))
  try {
    const dir = join(root, 'fp')
    makeFixture(dir, { ...BIG, seed: 7 })
    await initWorkspace({ dir })
    const { id } = await snapshotWorkspace({ dir, message: 'image' })
    const { store } = await openStore({ dir })
    const { tree } = (await readSnapshot(store, id)).world
    const copy = join(root, 'cp')
    const { a: ours, b: cp } = await compare(
      { run: () => ensureBaseDir(store, tree), before: () => removeSettled(join(store.root, 'branches', 'bases')) },
      { run: () => void execFileSync('sh', ['-c', `mkdir ${copy} && cp -al ${dir}/d* ${copy}/`]), before: () => removeSettled(copy) },
      { runs: 5, warmup: 1 },
    )
    const op = `base view of a ${BIG.files}-file image, built whole`
    return [
      { operation: op, tool: 'ensureBaseDir (library: the tree checked, then a hard link per file)', ms: ours, 'vs cp -al': ours / cp },
      { operation: op, tool: 'cp -al of the same files', ms: cp, 'vs cp -al': 1 },
    ]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** Remove a tree and let the disk finish with it (writeback, discards) before the clock starts, not during. */
function removeSettled(path: string): void {
  rmSync(path, { recursive: true, force: true })
  execFileSync('sync')
}

/** Where the fixture puts file `i`. */
const fixturePath = (i: number) => join(`d${Math.floor(i / 1000)}`, `s${Math.floor(i / 100) % 10}`, `f${i}.txt`)

/** Change `files` of the fixture (append a line to each): the same paths and bytes in both trees. */
function change(dir: string, indexes: number[], tag: string): void {
  for (const i of indexes) appendFileSync(join(dir, fixturePath(i)), `\n// ${tag} ${i}\n`)
}

/** A side's change to a fixture directory, made alike in the store's workspace and in git's. */
type SideChange = (dir: string) => void

/**
 * Two images of a 10k-file workspace that parted at a common one (`ours` and `theirs` made
 * on each side), and the same history as git commits; `gitMerge` times `git merge` alone,
 * main put back on ours before each run (not timed).
 */
async function diverged(root: string, seed: number, ours: SideChange, theirs: SideChange) {
  const dir = join(root, 'fp')
  const gw = join(root, 'git')
  makeFixture(dir, { ...BIG, seed })
  makeFixture(gw, { ...BIG, seed })
  await initWorkspace({ dir })
  const { store } = await openStore({ dir })
  const base = (await snapshotWorkspace({ dir, message: 'base' })).id
  await updateRef({ store, name: 'refs/heads/other', id: base, message: 'branch' })
  ours(dir)
  const oursId = (await snapshotWorkspace({ dir, message: 'ours' })).id
  await checkout({ dir, id: 'other' })
  theirs(dir)
  const theirsId = (await snapshotWorkspace({ dir, message: 'theirs' })).id
  await checkout({ dir, id: 'main' })
  gitIn(gw, 'init', '-q', '-b', 'main')
  gitIn(gw, 'add', '-A')
  gitIn(gw, 'commit', '-qm', 'base')
  gitIn(gw, 'branch', 'other')
  for (const [name, side] of [['ours', ours] as const, ['theirs', theirs] as const]) {
    if (name === 'theirs') gitIn(gw, 'checkout', '-q', 'other')
    side(gw)
    gitIn(gw, 'add', '-A')
    gitIn(gw, 'commit', '-qm', name)
  }
  gitIn(gw, 'checkout', '-q', 'main')
  const gitOurs = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: gw }).toString().trim()
  const gitMerge = { run: () => gitIn(gw, 'merge', '-q', '--no-edit', 'other'), before: () => gitIn(gw, 'reset', '-q', '--hard', gitOurs) }
  return { dir, store, oursId, theirsId, gitMerge }
}

/** Two images of a 10k-file workspace that parted at a common one, 10 files changed on each side; the same as git commits. */
async function mergeRows(): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-imerge-'))
  try {
    const ours = Array.from({ length: 10 }, (_, i) => i * 997)
    const theirs = Array.from({ length: 10 }, (_, i) => 500 + i * 991)
    const { dir, store, oursId, theirsId, gitMerge } = await diverged(
      root,
      11,
      (at) => change(at, ours, 'ours'),
      (at) => change(at, theirs, 'theirs'),
    )
    const resetFp = async () => {
      await updateRef({ store, name: 'refs/heads/main', id: oursId, message: 'bench reset' })
      await checkout({ dir, id: 'main', force: true })
    }
    const inStore = await compare({ run: () => mergeImages({ store, ours: oursId, theirs: theirsId }) }, gitMerge, { runs: 7 })
    const noRenames = await compare(
      { run: () => mergeImages({ store, ours: oursId, theirs: theirsId }) },
      { run: () => mergeImages({ store, ours: oursId, theirs: theirsId, renames: false }) },
      { runs: 51 },
    )
    const inPlace = await compare({ run: () => merge({ dir, store, from: 'other' }), before: resetFp }, gitMerge, { runs: 7 })
    const cli = await compare({ run: () => spawnSync(CLI, ['merge', 'other'], { cwd: dir }), before: resetFp }, gitMerge, { runs: 5 })
    const op = `merge two images of ${BIG.files} files, 10 changed per side`
    return [
      { operation: op, tool: 'mergeImages (library, in the store: merged image written)', ms: inStore.a, 'git ms': inStore.b, 'vs git': inStore.ratio, target: '<= 1.0x' },
      {
        operation: op,
        tool: 'mergeImages, renames found (default) against renames: false (the same run, interleaved)',
        ms: noRenames.a,
        'git ms': noRenames.b,
        'vs git': noRenames.ratio,
        target: '<= 1.2x of renames: false',
      },
      { operation: op, tool: 'merge (library, into HEAD: files and HEAD moved)', ms: inPlace.a, 'git ms': inPlace.b, 'vs git': inPlace.ratio, target: '<= 1.0x' },
      { operation: op, tool: 'forkpoint merge (CLI, Node start included)', ms: cli.a, 'git ms': cli.b, 'vs git': cli.ratio, target: '' },
    ]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** Files `ours` moves into `moved/` (theirs edits the first ten of them). */
const MOVED = Array.from({ length: 100 }, (_, i) => i * 97)

/** The 10k-file merge where ours moved 100 files into a new directory and theirs edited 10 of them: git merges it cleanly, following the renames. */
async function renameMergeRows(): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-rmerge-'))
  try {
    const edited = MOVED.slice(0, 10)
    const moveAll = (at: string) => {
      mkdirSync(join(at, 'moved'))
      for (const i of MOVED) renameSync(join(at, fixturePath(i)), join(at, 'moved', `f${i}.txt`))
    }
    const { store, oursId, theirsId, gitMerge } = await diverged(root, 13, moveAll, (at) => change(at, edited, 'theirs'))
    const result = await mergeImages({ store, ours: oursId, theirs: theirsId })
    const withRenames = await compare({ run: () => mergeImages({ store, ours: oursId, theirs: theirsId }) }, gitMerge, { runs: 7 })
    const without = await compare(
      { run: () => mergeImages({ store, ours: oursId, theirs: theirsId }) },
      { run: () => mergeImages({ store, ours: oursId, theirs: theirsId, renames: false }) },
      { runs: 51 },
    )
    const op = `merge two images of ${BIG.files} files: ${MOVED.length} moved into a new directory on one side, ${edited.length} of them edited on the other`
    return [
      {
        operation: op,
        tool: `mergeImages (library, in the store), renames found: ${result.outcome}`,
        ms: withRenames.a,
        'git ms': withRenames.b,
        'vs git': withRenames.ratio,
        target: '<= 1.0x',
      },
      {
        operation: op,
        tool: 'mergeImages, renames found against renames: false (10 modify/delete conflicts; the same run, interleaved)',
        ms: without.a,
        'git ms': without.b,
        'vs git': without.ratio,
        target: '',
      },
    ]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** `npm run bench -- image [fork|merge|lines ...]`: the sections named, or all three. */
export async function main(args: string[]): Promise<void> {
  const wanted = (section: string) => args.length === 0 || args.includes(section)
  if (wanted('fork')) {
    report('image-fork', 'Image fork', [...(await forkRows()), ...(await materializeRows())])
    report('image-base-view', 'Image fork: the base view a first fork builds (median ms, interleaved)', await baseDirRows())
  }
  if (wanted('merge')) report('image-merge-10k', 'Image merge: two images of a 10k-file workspace vs git merge (median ms)', [...(await mergeRows()), ...(await renameMergeRows())])
  if (wanted('lines')) await lineMergeRows()
}

async function lineMergeRows(): Promise<void> {
  const inputs = Array.from({ length: FILES }, (_, i) => versions(i))
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-merge-'))
  const paths = inputs.map((v, i) => {
    const p = { base: join(dir, `${i}.base`), ours: join(dir, `${i}.ours`), theirs: join(dir, `${i}.theirs`) }
    writeFileSync(p.base, v.base)
    writeFileSync(p.ours, v.ours)
    writeFileSync(p.theirs, v.theirs)
    return p
  })
  try {
    const ours = await measure(() => inputs.forEach((v) => mergeLines(v)), { runs: 5 })
    const git = await measure(() => paths.forEach((p) => spawnSync('git', ['merge-file', '-p', '--diff3', p.ours, p.base, p.theirs])), { runs: 3 })
    const clean = inputs.every((v) => mergeLines(v).clean)
    const sameAsGit = paths.filter((p, i) => spawnSync('git', ['merge-file', '-p', '--diff3', p.ours, p.base, p.theirs]).stdout.equals(mergeLines(inputs[i]!).bytes)).length
    const rows: Row[] = [
      {
        operation: `line-level merge of ${FILES} text files (${LINES} lines, both sides changed)`,
        tool: 'forkpoint mergeLines (in process)',
        ms: ours.median,
        'vs git': ours.median / git.median,
        clean: String(clean),
        'same bytes as git': `${sameAsGit}/${FILES}`,
      },
      {
        operation: `line-level merge of ${FILES} text files (${LINES} lines, both sides changed)`,
        tool: 'git merge-file --diff3, once per file',
        ms: git.median,
        'vs git': 1,
        clean: 'true',
        'same bytes as git': '-',
      },
    ]
    report('image-merge', 'Image merge: line-level merge', rows)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
