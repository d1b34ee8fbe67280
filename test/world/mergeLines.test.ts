import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MAX_EDITS, diffLines } from '../../src/world/diff/diffLines.js'
import { mergeLines } from '../../src/world/merge/mergeLines.js'
import { tempDir } from '../helpers/tmp.js'

const dir = tempDir('merge-lines')
const labels = { ours: 'ours', base: 'base', theirs: 'theirs' }

/** `git merge-file -p --diff3` on the same three inputs: its output and whether it was clean. */
function gitMerge(base: Buffer, ours: Buffer, theirs: Buffer): { bytes: Buffer; clean: boolean } {
  const [b, o, t] = ['base', 'ours', 'theirs'].map((name) => join(dir, name)) as [string, string, string]
  writeFileSync(b, base)
  writeFileSync(o, ours)
  writeFileSync(t, theirs)
  const git = spawnSync('git', ['merge-file', '-p', '--diff3', '-L', 'ours', '-L', 'base', '-L', 'theirs', o, b, t])
  if (git.status === null || git.status < 0 || git.status > 127) throw new Error(`git merge-file failed: ${git.stderr.toString()}`)
  return { bytes: git.stdout, clean: git.status === 0 }
}

/** A deterministic generator, so a failure names a case that can be run again. */
function seeded(seed: number): () => number {
  let state = seed
  return () => ((state = (state * 1103515245 + 12345) & 0x7fffffff), state / 0x7fffffff)
}

function edit(lines: string[], random: () => number): string[] {
  const out = [...lines]
  for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
    const at = Math.floor(random() * (out.length + 1))
    const kind = random()
    if (kind < 0.33) out.splice(at, 1)
    else if (kind < 0.66) out.splice(at, 0, `new ${Math.floor(random() * 5)}`)
    else if (at < out.length) out[at] = `changed ${Math.floor(random() * 5)}`
  }
  return out
}

const text = (lines: string[]): Buffer => Buffer.from(lines.map((l) => `${l}\n`).join(''))
const merge = (base: string, ours: string, theirs: string) => mergeLines({ base: Buffer.from(base), ours: Buffer.from(ours), theirs: Buffer.from(theirs), labels })

describe('mergeLines against git merge-file --diff3', () => {
  // Where xdiff's divide-and-conquer search picks another script of the same length, git may
  // report a conflict that merges cleanly here; every merge git makes cleanly is reproduced.
  it('gives git’s output byte for byte wherever git merges cleanly', () => {
    const random = seeded(20261124)
    let clean = 0
    let conflicted = 0
    for (let n = 0; n < 600; n++) {
      // few distinct lines, so equal lines abound and alignment choices matter
      const base = Array.from({ length: 3 + Math.floor(random() * 14) }, () => `line ${Math.floor(random() * 6)}`)
      const [b, o, t] = [base, edit(base, random), edit(base, random)].map(text) as [Buffer, Buffer, Buffer]
      const git = gitMerge(b, o, t)
      const ours = mergeLines({ base: b, ours: o, theirs: t, labels })
      if (git.clean) {
        expect({ case: n, clean: ours.clean, merged: ours.bytes.toString() }).toEqual({ case: n, clean: true, merged: git.bytes.toString() })
        clean++
      } else conflicted++
    }
    expect(clean).toBeGreaterThan(100)
    expect(conflicted).toBeGreaterThan(100)
  })

  it('matches git on the edge cases: missing final newline, CRLF, empty files, bytes that are not UTF-8', () => {
    const cases: Array<[string | Buffer, string | Buffer, string | Buffer]> = [
      ['a\nb\nc', 'a\nB\nc', 'a\nb\nC'],
      ['a\nb\nc', 'a\nb\nc\n', 'A\nb\nc'],
      ['a\nb\n', 'a\nb\nx', 'a\nb\ny'],
      ['a\r\nb\r\nc\r\n', 'a\r\nB\r\nc\r\n', 'a\r\nX\r\nc\r\n'],
      ['', 'one\n', 'two\n'],
      ['', 'same\n', 'same\n'],
      ['x\n', '', 'x\ny\n'],
      [Buffer.from([0x61, 0x0a, 0xff, 0x0a, 0x62, 0x0a]), Buffer.from([0x61, 0x0a, 0xfe, 0x0a, 0x62, 0x0a]), Buffer.from([0x61, 0x0a, 0xff, 0x0a, 0x63, 0x0a])],
    ]
    for (const [base, ours, theirs] of cases) {
      const [b, o, t] = [base, ours, theirs].map((v) => Buffer.from(v)) as [Buffer, Buffer, Buffer]
      const git = gitMerge(b, o, t)
      const result = mergeLines({ base: b, ours: o, theirs: t, labels })
      expect({ clean: result.clean, bytes: result.bytes.toString('latin1') }).toEqual({ clean: git.clean, bytes: git.bytes.toString('latin1') })
    }
  })
})

describe('mergeLines', () => {
  it('takes changes that neither overlap nor touch, and the same change once', () => {
    expect(merge('1\n2\n3\n4\n5\n', 'one\n2\n3\n4\n5\n', '1\n2\n3\n4\nfive\n')).toEqual({ clean: true, bytes: Buffer.from('one\n2\n3\n4\nfive\n') })
    expect(merge('1\n2\n3\n', '1\ntwo\n3\n', '1\ntwo\n3\n')).toEqual({ clean: true, bytes: Buffer.from('1\ntwo\n3\n') })
  })

  it('writes a conflict with all three versions, labelled', () => {
    const result = mergeLines({
      base: Buffer.from('a\nb\nc\n'),
      ours: Buffer.from('a\nmine\nc\n'),
      theirs: Buffer.from('a\nyours\nc\n'),
      labels: { ours: 'HEAD', base: 'merge base', theirs: 'attempt-2' },
    })
    expect(result).toEqual({ clean: false, conflicts: 1, bytes: Buffer.from('a\n<<<<<<< HEAD\nmine\n||||||| merge base\nb\n=======\nyours\n>>>>>>> attempt-2\nc\n') })
  })

  it('counts each conflict region', () => {
    const result = merge('1\n2\n3\n4\n5\n', 'x\n2\n3\n4\nx\n', 'y\n2\n3\n4\ny\n')
    expect(result.clean ? 0 : result.conflicts).toBe(2)
  })
})

describe('diffLines', () => {
  it('finds the shortest script and slides an insertion of a repeated line down, as git does', () => {
    expect(diffLines(['a', 'b', 'c'], ['a', 'x', 'c'])).toEqual([{ baseStart: 1, baseCount: 1, sideStart: 1, sideCount: 1 }])
    expect(diffLines(['a', 'b', 'b', 'c'], ['a', 'b', 'b', 'b', 'c'])).toEqual([{ baseStart: 3, baseCount: 0, sideStart: 3, sideCount: 1 }])
  })

  it(`calls the whole middle changed past ${MAX_EDITS} edits instead of growing without bound`, () => {
    const base = Array.from({ length: MAX_EDITS + 10 }, (_, i) => `a${i}`)
    const side = ['same', ...Array.from({ length: MAX_EDITS + 10 }, (_, i) => `b${i}`), 'end']
    const hunks = diffLines(['same', ...base, 'end'], side)
    expect(hunks).toEqual([{ baseStart: 1, baseCount: base.length, sideStart: 1, sideCount: base.length }])
  })
})
