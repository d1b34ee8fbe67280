import { spawnSync } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { snapshotWorkspace } from '../../src/index.js'
import { mulberry32 } from '../../src/util/mulberry32.js'
import { collectPatch, patchSnapshots } from '../../src/world/diff/patchSnapshots.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

async function patchOf(args: { dir: string; a: string; b?: string; maxFileBytes?: number }): Promise<string> {
  return (await collectPatch(patchSnapshots(args))).patch
}

/** git's hunks for the same two texts (from the first `@@` on), without the indent heuristic forkpoint's slider lacks. */
function gitHunks(before: string | null, after: string | null): string {
  const dir = tempDir('git-diff')
  const path = (name: string, text: string | null) => {
    if (text === null) return '/dev/null'
    spawnSync('sh', ['-c', 'cat > "$1"', 'sh', join(dir, name)], { input: text })
    return join(dir, name)
  }
  const out = spawnSync('git', ['diff', '--no-index', '--no-indent-heuristic', '--no-color', path('old', before), path('new', after)], { encoding: 'latin1' }).stdout
  return out.slice(out.indexOf('@@'))
}

function hunksOf(patch: string): string {
  return patch.slice(patch.indexOf('@@'))
}

/**
 * A text of `n` lines like source code: mostly distinct, with the blank lines and braces
 * that make the slider matter. (Text of a few lines repeated at random has many shortest
 * scripts; git's preprocessing then picks one forkpoint's search may not.)
 */
function someLines(random: () => number, n: number): string[] {
  const common = ['{', '}', '', '  return x', 'function f() {', '_private()', '$dollar']
  return Array.from({ length: n }, () => (random() < 0.25 ? common[Math.floor(random() * common.length)]! : `  let v${Math.floor(random() * 1e6)} = 1`))
}

function edited(random: () => number, lines: string[]): string[] {
  const out = [...lines]
  for (let e = 0; e < 1 + random() * 8; e++) {
    const at = Math.floor(random() * (out.length + 1))
    const r = random()
    if (r < 0.4) out.splice(at, 1 + Math.floor(random() * 3))
    else if (r < 0.8) out.splice(at, 0, ...someLines(random, 1 + Math.floor(random() * 4)))
    else out.splice(at, 1, `changed ${e}`)
  }
  return out
}

describe('diff --patch', () => {
  it('writes the same hunks as git diff for text files: context, merged hunks, function lines, missing newlines', async () => {
    const random = mulberry32(42)
    const cases: Array<[string, string]> = [
      ['a\nb\nc\n', 'a\nB\nc\n'],
      ['one\ntwo', 'one\ntwo\n'],
      ['x\n', ''],
      ['', 'new\nlines\n'],
      ['int main() {\n  a;\n  b;\n  c;\n  d;\n  e;\n  f;\n  g;\n  h;\n}\n', 'int main() {\n  a;\n  b;\n  c;\n  D;\n  e;\n  f;\n  g;\n  h;\n}\n'],
    ]
    for (let i = 0; i < 60; i++) {
      const lines = someLines(random, 20 + Math.floor(random() * 60))
      const tail = random() < 0.3 ? '' : '\n'
      cases.push([lines.join('\n') + tail, edited(random, lines).join('\n') + (random() < 0.3 ? '' : '\n')])
    }
    const files = Object.fromEntries(cases.map(([before], i) => [`f${i}.txt`, before]))
    const { dir } = await storeWorkspace(files)
    const first = await snapshotWorkspace({ dir })
    for (const [i, [, after]] of cases.entries()) await fs.writeFile(join(dir, `f${i}.txt`), after)
    const second = await snapshotWorkspace({ dir })
    const sections = (await patchOf({ dir, a: first.id, b: second.id })).split(/^(?=diff --git )/m)
    expect(sections).toHaveLength(cases.length)
    for (const section of sections) {
      const i = Number(/^diff --git a\/f(\d+)\.txt/.exec(section)![1])
      expect(hunksOf(section), `case ${i}`).toBe(gitHunks(cases[i]![0], cases[i]![1]))
    }
  })

  it("writes git's headers: new and deleted files, modes, symlink targets, binary and large files", async () => {
    const { dir } = await storeWorkspace({
      'gone.txt': 'bye\n',
      'run.sh': 'echo\n',
      link: { symlink: 'old-target' },
      'data.bin': Buffer.from([1, 0, 2]),
      'big.txt': 'big\n',
      'empty-dir': { dir: true },
    })
    const first = await snapshotWorkspace({ dir })
    await fs.rm(join(dir, 'gone.txt'))
    await fs.chmod(join(dir, 'run.sh'), 0o755)
    await fs.rm(join(dir, 'link'))
    await fs.symlink('new-target', join(dir, 'link'))
    await fs.writeFile(join(dir, 'data.bin'), Buffer.from([1, 0, 3]))
    await fs.writeFile(join(dir, 'big.txt'), 'bigger than the cap\n')
    await fs.writeFile(join(dir, 'added.txt'), 'hello\n')
    await fs.rmdir(join(dir, 'empty-dir'))
    const second = await snapshotWorkspace({ dir })
    const patch = await patchOf({ dir, a: first.id, b: second.id, maxFileBytes: 16 })
    const index = /^index \S+/gm
    expect(patch.replace(index, 'index X')).toBe(
      [
        'diff --git a/added.txt b/added.txt',
        'new file mode 100644',
        'index X',
        '--- /dev/null',
        '+++ b/added.txt',
        '@@ -0,0 +1 @@',
        '+hello',
        'diff --git a/big.txt b/big.txt',
        'index X 100644',
        'Binary files a/big.txt and b/big.txt differ',
        'diff --git a/data.bin b/data.bin',
        'index X 100644',
        'Binary files a/data.bin and b/data.bin differ',
        'diff --git a/gone.txt b/gone.txt',
        'deleted file mode 100644',
        'index X',
        '--- a/gone.txt',
        '+++ /dev/null',
        '@@ -1 +0,0 @@',
        '-bye',
        'diff --git a/link b/link',
        'index X 120000',
        '--- a/link',
        '+++ b/link',
        '@@ -1 +1 @@',
        '-old-target',
        '\\ No newline at end of file',
        '+new-target',
        '\\ No newline at end of file',
        'diff --git a/run.sh b/run.sh',
        'old mode 100644',
        'new mode 100755',
        '',
      ].join('\n'),
    )
    expect(patch).toMatch(/^index 0{12}\.\.[0-9a-f]{12}$/m)
  })

  it('diffs against the workspace when B is absent, reading its files as they are now', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'one\n' })
    const first = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'a.txt'), 'two\n')
    expect(hunksOf(await patchOf({ dir, a: first.id }))).toBe('@@ -1 +1 @@\n-one\n+two\n')
  })

  it('shows a change of type as a deletion and an addition', async () => {
    const { dir } = await storeWorkspace({ x: 'file\n' })
    const first = await snapshotWorkspace({ dir })
    await fs.rm(join(dir, 'x'))
    await fs.symlink('file', join(dir, 'x'))
    const patch = await patchOf({ dir, a: first.id })
    expect(patch.match(/^diff --git a\/x b\/x$/gm)).toHaveLength(2)
    expect(patch).toMatch(/deleted file mode 100644[^]*new file mode 120000/)
  })
})
