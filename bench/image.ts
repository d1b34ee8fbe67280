/**
 * `npm run bench -- image`: merging images. So far the line-level merge of text files that
 * both sides changed, against `git merge-file --diff3` run on each file, in the same run.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

export async function main(): Promise<void> {
  const inputs = Array.from({ length: FILES }, (_, i) => versions(i))
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-merge-'))
  const paths = inputs.map((v, i) => {
    const p = { base: join(dir, `${i}.base`), ours: join(dir, `${i}.ours`), theirs: join(dir, `${i}.theirs`) }
    writeFileSync(p.base, v.base), writeFileSync(p.ours, v.ours), writeFileSync(p.theirs, v.theirs)
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
    report('image', 'Image merge: line-level merge', rows)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
