import { execFileSync } from 'node:child_process'
import { promises as fs, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { snapshotWorkspace } from '../../src/index.js'
import { type ReadIndex, RACY, decodeIndex } from '../../src/world/scan/indexFile.js'
import { type LstatBackend, STAT_SLOT, VANISHED, lstat, nativeLstat, nodeLstat } from '../../src/world/scan/lstatNames.js'
import { ROOT, runCli } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

const ADDON = join(ROOT, 'build', 'Release', 'forkpoint_native.node')

/** The compiled lstat; `npm run build` makes it on this machine, so its absence is a failure, not a skip. */
function compiled(): LstatBackend {
  if (!nativeLstat) throw new Error(`${ADDON} did not load: 'npm run build' compiles native/lstat_names.c`)
  return nativeLstat
}

/** Both lstats' numbers for `names` in `dir`, as plain arrays for a readable diff. */
function both(dir: string, names: string[]): { native: number[]; node: number[] } {
  return { native: [...compiled().lstatNames(dir, names)], node: [...nodeLstat.lstatNames(dir, names)] }
}

async function indexOf(dir: string): Promise<ReadIndex> {
  const index = decodeIndex(readFileSync(join(dir, '.forkpoint', 'index')))
  if (!index) throw new Error('no index')
  return index
}

/** Each directory's answer from one files check. */
function answers(backend: LstatBackend, index: ReadIndex): Record<string, boolean> {
  const check = backend.startFilesCheck(index.workspace, index)
  return Object.fromEntries(index.dirPaths.map((path, dir) => [path || '.', check.holds(dir)]))
}

describe('the compiled lstat (native/lstat_names.c)', () => {
  it('is built and is what scans use', () => {
    expect(compiled().name).toBe('native')
    expect(lstat).toBe(nativeLstat)
  })

  it("gives Node's numbers for every kind of entry, sub-millisecond times, odd names and gone ones", async () => {
    const dir = await makeWorkspace({
      'plain.txt': 'p',
      'run.sh': { content: '#!/bin/sh\n', mode: 0o755 },
      link: { symlink: '/nowhere' },
      'sub/x': 'x',
      'naïve ünïcode ☃.txt': 'u',
      'new\nline': 'n',
      ' space ': 's',
    })
    await fs.utimes(join(dir, 'plain.txt'), 1_700_000_000.123456, 1_700_000_000.9876542)
    execFileSync('mkfifo', [join(dir, 'fifo')])
    const names = ['plain.txt', 'run.sh', 'link', 'sub', 'naïve ünïcode ☃.txt', 'new\nline', ' space ', 'fifo', 'gone']
    const { native, node } = both(dir, names)
    expect(native).toEqual(node)
    expect(native[names.indexOf('gone') * STAT_SLOT]).toBe(VANISHED)
    expect(native[2]).toBe(node[2]) // mtime with its fraction of a millisecond, to the last bit
    const many = Array.from({ length: 1500 }, (_, i) => `f${i}`)
    await Promise.all(many.slice(0, 1000).map((n) => fs.writeFile(join(dir, 'sub', n), n)))
    const sub = both(join(dir, 'sub'), many)
    expect(sub.native).toEqual(sub.node)
    expect(sub.native.filter((_, i) => i % STAT_SLOT === 0 && sub.native[i] === VANISHED)).toHaveLength(500)
  })

  it('treats a directory that is gone, or is a file, as Node does', async () => {
    const dir = await makeWorkspace({ file: 'f' })
    expect(both(join(dir, 'missing'), ['a', 'b'])).toEqual({ native: [VANISHED, 0, 0, 0, 0, VANISHED, 0, 0, 0, 0], node: [VANISHED, 0, 0, 0, 0, VANISHED, 0, 0, 0, 0] })
    expect(() => compiled().lstatNames(join(dir, 'file'), ['a'])).toThrow(expect.objectContaining({ code: 'ENOTDIR' }))
    expect(() => nodeLstat.lstatNames(join(dir, 'file'), ['a'])).toThrow(expect.objectContaining({ code: 'ENOTDIR' }))
  })

  it("answers the index's files check as Node's lstat does, change by change", async () => {
    const files: Record<string, string> = {}
    for (let d = 0; d < 12; d++) for (let f = 0; f < 30; f++) files[`d${d}/s${d % 3}/f${f}.txt`] = `${d}.${f}`
    const { dir } = await storeWorkspace({ ...files, 'top.txt': 't', link: { symlink: 'top.txt' } })
    await new Promise((r) => setTimeout(r, 120)) // past the racy window
    await snapshotWorkspace({ dir })
    const index = await indexOf(dir)
    const all = answers(nodeLstat, index)
    expect(Object.values(all).every(Boolean)).toBe(true)
    expect(answers(compiled(), index)).toEqual(all)
    const changes: Array<[string, string, () => Promise<unknown>]> = [
      [
        'content rewritten, same size, mtime put back (ctime moves)',
        'd3/s0',
        async () => {
          const st = await fs.stat(join(dir, 'd3/s0/f4.txt'))
          await fs.writeFile(join(dir, 'd3/s0/f4.txt'), '3.5')
          await fs.utimes(join(dir, 'd3/s0/f4.txt'), st.atime, st.mtime)
        },
      ],
      ['the exec bit', 'd5/s2', () => fs.chmod(join(dir, 'd5/s2/f0.txt'), 0o755)],
      ['a file removed', 'd7/s1', () => fs.rm(join(dir, 'd7/s1/f29.txt'))],
      ['a file replaced by a directory', 'd11/s2', () => fs.rm(join(dir, 'd11/s2/f3.txt')).then(() => fs.mkdir(join(dir, 'd11/s2/f3.txt')))],
      ['a directory removed', 'd0/s0', () => fs.rm(join(dir, 'd0/s0'), { recursive: true })],
      ['the top directory', '.', () => fs.appendFile(join(dir, 'top.txt'), '!')],
    ]
    for (const [what, changed, change] of changes) {
      await change()
      const expected = { ...answers(nodeLstat, index) }
      expect({ what, answer: expected[changed] }).toEqual({ what, answer: false })
      expect({ what, answers: answers(compiled(), index) }).toEqual({ what, answers: expected })
    }
    const racy = { ...index, kinds: Uint8Array.from(index.kinds, (k, row) => (row === index.dirRows[2 * index.dirPaths.indexOf('d9/s0')]! ? k | RACY : k)) }
    expect(answers(compiled(), racy)['d9/s0']).toBe(false)
    expect(answers(nodeLstat, racy)['d9/s0']).toBe(false)
  })

  it('survives checks stopped or dropped while their thread still runs, and garbage collection; a stopped check still answers', async () => {
    const dir = tempDir('gc')
    await fs.mkdir(join(dir, 'a'))
    await Promise.all(Array.from({ length: 300 }, (_, i) => fs.writeFile(join(dir, 'a', `f${i}`), `${i}`)))
    const script = `
      const { lstatSync } = require('node:fs')
      const addon = require(${JSON.stringify(ADDON)})
      const root = ${JSON.stringify(dir)}
      const names = Array.from({ length: 300 }, (_, i) => 'f' + i)
      const stats = new Float64Array(names.length * 4)
      names.forEach((n, i) => { const s = lstatSync(root + '/a/' + n); stats.set([s.size, s.mtimeMs, s.ctimeMs, s.ino], i * 4) })
      const dirPaths = Array.from({ length: 40 }, () => 'a').join('\\0')
      const dirRows = new Uint32Array(Array.from({ length: 40 }, () => [0, names.length]).flat())
      const bytes = Buffer.from(names.join('\\0'))
      let asked = 0, held = 0
      for (let round = 0; round < 300; round++) {
        const job = addon.startFilesCheck(root, dirPaths, dirRows, bytes, new Uint8Array(names.length), stats)
        if (round % 3 === 0) { asked++; if (addon.filesCheck(job, round % 40) === 1) held++ }
        if (round % 3 === 1) { addon.filesStop(job); asked++; if (addon.filesCheck(job, 39 - (round % 40)) === 1) held++ }
        if (round % 50 === 0) globalThis.gc()
      }
      globalThis.gc()
      setTimeout(() => { globalThis.gc(); console.log(JSON.stringify({ asked, held })) }, 200)
    `
    const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual({ asked: 200, held: 200 })
  })

  it('rejects columns that do not fit together rather than reading past them, and handles it did not make', () => {
    const addon = createRequire(import.meta.url)(ADDON) as Record<'startFilesCheck' | 'filesCheck' | 'filesStop', (...args: unknown[]) => unknown>
    const stats = new Float64Array(4)
    expect(() => addon.startFilesCheck('/', 'a', new Uint32Array([0, 5]), Buffer.from('x'), new Uint8Array(1), stats)).toThrow(/do not fit/)
    expect(() => addon.startFilesCheck('/', 'a', new Uint32Array([0, 2]), Buffer.from('x'), new Uint8Array(2), new Float64Array(8))).toThrow(/do not fit/) // one name, two rows
    expect(() => addon.startFilesCheck('/', 'a', new Uint32Array([0, 1, 0, 1]), Buffer.from('x'), new Uint8Array(1), stats)).toThrow(/do not fit/) // one path, two directories
    expect(() => addon.startFilesCheck('/', 'a', new Uint32Array([0, 1]), Buffer.from('x'), new Uint8Array(1), new Float64Array(3))).toThrow(TypeError)
    expect(() => addon.startFilesCheck('/', 'a', [0, 1], Buffer.from('x'), new Uint8Array(1), stats)).toThrow(TypeError)
    // only a handle it made is a job: not any object, not another addon's external
    const job = addon.startFilesCheck('/', '', new Uint32Array([0, 0]), Buffer.from(''), new Uint8Array(0), new Float64Array(0))
    expect(addon.filesCheck(job, 0)).toBe(1)
    expect(() => addon.filesCheck(job, 1)).toThrow(TypeError)
    for (const notAJob of [{}, 42, null, Buffer.from('x')]) {
      expect(() => addon.filesCheck(notAJob, 0)).toThrow(TypeError)
      expect(() => addon.filesStop(notAJob)).toThrow(TypeError)
    }
  })
})

describe('both lstats', () => {
  it('write an index the other reads: a snapshot by one, the next by the other, reads nothing it need not', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a', 'src/b.txt': 'b', 'src/deep/c.txt': 'c' })
    await new Promise((r) => setTimeout(r, 120))
    const snapshot = async (native: boolean) => {
      const r = await runCli(['snapshot', '--json'], { cwd: dir, env: { FORKPOINT_NATIVE: native ? '1' : '0' } })
      expect(r.stderr).toBe('')
      return JSON.parse(r.stdout) as { created: boolean; hashedFiles: number }
    }
    expect(await snapshot(true)).toMatchObject({ created: true, hashedFiles: 3 })
    expect(await snapshot(false)).toMatchObject({ created: false, hashedFiles: 0 })
    await fs.writeFile(join(dir, 'src/deep/c.txt'), 'C!')
    await new Promise((r) => setTimeout(r, 120))
    expect(await snapshot(false)).toMatchObject({ created: true, hashedFiles: 1 })
    expect(await snapshot(true)).toMatchObject({ created: false, hashedFiles: 0 })
    await fs.writeFile(join(dir, 'a.txt'), 'A!')
    await new Promise((r) => setTimeout(r, 120))
    expect(await snapshot(true)).toMatchObject({ created: true, hashedFiles: 1 })
    expect(await snapshot(false)).toMatchObject({ created: false, hashedFiles: 0 })
  })

  it("are chosen by FORKPOINT_NATIVE (0: Node's)", () => {
    const chosen = (value: string) =>
      execFileSync(process.execPath, ['--import', 'tsx', '-e', "import('./src/world/scan/lstatNames.ts').then((m) => console.log(m.lstat.name))"], {
        cwd: ROOT,
        env: { ...process.env, FORKPOINT_NATIVE: value },
        encoding: 'utf8',
      }).trim()
    expect([chosen('0'), chosen('1')]).toEqual(['node', 'native'])
  })
})
