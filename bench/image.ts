/**
 * `npm run bench -- image`: forking and merging images, each beside its baseline in the same
 * run: `fork -n 100` (library and CLI) against git creating 100 branches in one
 * `update-ref --stdin`; the line-level merge of text files both sides changed against
 * `git merge-file --diff3` run on each file.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { forkImage } from '../src/image/forkImage.js'
import { initWorkspace, openStore, snapshotWorkspace } from '../src/index.js'
import { mergeLines } from '../src/world/mergeLines.js'
import { type Row, measure, report } from './harness.js'

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
    const { store } = await openStore({ cwd: dir })
    const git = (...args: string[]) => spawnSync('git', ['-C', dir, ...args])
    git('init', '-q')
    git('-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '--allow-empty', '-m', 'base')
    const head = git('rev-parse', 'HEAD').stdout.toString().trim()
    let round = 0
    const library = await measure(() => forkImage({ store, id, n: CHILDREN }), { runs: 5 })
    const cli = await measure(() => spawnSync(CLI, ['fork', id, '-n', String(CHILDREN)], { cwd: dir }), { runs: 5 })
    const branches = await measure(() => {
      round++
      const input = Array.from({ length: CHILDREN }, (_, i) => `create refs/heads/fork-${round}-${i} ${head}\n`).join('')
      spawnSync('git', ['-C', dir, 'update-ref', '--stdin'], { input })
    }, { runs: 5 })
    const perChild = (ms: number) => ms / CHILDREN
    return [
      { operation: `fork -n ${CHILDREN}`, tool: 'forkImage (library)', 'ms per child': perChild(library.median), 'vs git': library.median / branches.median, target: '< 2 ms per child' },
      { operation: `fork -n ${CHILDREN}`, tool: 'forkpoint fork (CLI, Node start included)', 'ms per child': perChild(cli.median), 'vs git': cli.median / branches.median, target: '' },
      { operation: `fork -n ${CHILDREN}`, tool: `git update-ref --stdin (${CHILDREN} new branches)`, 'ms per child': perChild(branches.median), 'vs git': 1, target: '' },
    ]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function main(): Promise<void> {
  report('image-fork', 'Image fork', await forkRows())
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
      { operation: `line-level merge of ${FILES} text files (${LINES} lines, both sides changed)`, tool: 'forkpoint mergeLines (in process)', ms: ours.median, 'vs git': ours.median / git.median, clean: String(clean), 'same bytes as git': `${sameAsGit}/${FILES}` },
      { operation: `line-level merge of ${FILES} text files (${LINES} lines, both sides changed)`, tool: 'git merge-file --diff3, once per file', ms: git.median, 'vs git': 1, clean: 'true', 'same bytes as git': '-' },
    ]
    report('image-merge', 'Image merge: line-level merge', rows)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
