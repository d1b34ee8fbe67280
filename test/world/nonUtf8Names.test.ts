import { promises as fs, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MalformedObjectError, UnsafePathError, checkout, snapshotWorkspace, status } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { readSnapshot, readTree } from '../../src/world/tree/readObjects.js'
import { bytesOfName, isCanonicalName, nameFromBytes } from '../../src/util/fsName.js'
import { quotePath } from '../../src/world/diff/quotePath.js'
import { fp } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

const BAD = Buffer.from('bad\xffname', 'latin1') // not UTF-8
const BAD_DIR = Buffer.from('d\xe9j\xe0', 'latin1') // Latin-1 "déjà"
const at = (dir: string, ...parts: Buffer[]) => Buffer.concat([Buffer.from(`${dir}/`), ...parts.flatMap((p, i) => (i ? [Buffer.from('/'), p] : [p]))])
const namesIn = (dir: Buffer | string) =>
  readdirSync(dir, { encoding: 'buffer' })
    .map((b) => b.toString('hex'))
    .sort()

async function plantNames(dir: string): Promise<void> {
  await fs.writeFile(at(dir, BAD), 'x')
  await fs.mkdir(at(dir, BAD_DIR))
  await fs.writeFile(at(dir, BAD_DIR, BAD), 'inner')
  await fs.symlink(BAD, at(dir, Buffer.from('link\xfe', 'latin1')))
}

describe('file names that are not UTF-8', () => {
  it('round-trips every byte string through the escape, and refuses names no scan gives', () => {
    for (const bytes of [
      BAD,
      BAD_DIR,
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xc0, 0xaf]),
      Buffer.from([0xf4, 0x90, 0x80, 0x80]),
      Buffer.from('déjà ✓ 😀'),
      Buffer.from([0xef, 0xbf, 0xbd, 0xff]),
    ]) {
      const name = nameFromBytes(bytes)
      expect(bytesOfName(name).equals(bytes)).toBe(true)
      expect(isCanonicalName(name)).toBe(true)
    }
    expect(nameFromBytes(Buffer.from('déjà'))).toBe('déjà')
    expect(isCanonicalName('\udcc3\udca9')).toBe(false) // the bytes of "é", escaped: two names for one file
    expect(isCanonicalName('a\ud800')).toBe(false)
    expect(quotePath(nameFromBytes(BAD))).toBe('"bad\\xffname"')
    expect(quotePath('a\nb')).toBe('"a\\nb"')
    expect(quotePath('\x1b[31mred')).toBe('"\\x1b[31mred"')
  })

  it('are seen by status, kept by snapshots and checked out byte for byte', async () => {
    const { dir, store } = await storeWorkspace({ 'ok.txt': 'ok' })
    await snapshotWorkspace({ dir, store, message: 'first' })
    await plantNames(dir)
    const dirty = await status({ dir, store })
    expect(dirty.changes.map((c) => bytesOfName(c.path).toString('latin1')).sort()).toEqual(
      [BAD.toString('latin1'), `${BAD_DIR.toString('latin1')}/${BAD.toString('latin1')}`, 'link\xfe'].sort(),
    )
    const snap = await snapshotWorkspace({ dir, store, message: 'bytes' })
    expect((await status({ dir, store })).clean).toBe(true)
    const tree = await readTree(store, (await readSnapshot(store, snap.id)).world.tree)
    expect(tree.entries.map((e) => e.name)).toContain('bad\udcffname')

    const into = join(tempDir('into'), 'out')
    await checkout({ id: snap.id, dir, store, into })
    expect(namesIn(into)).toEqual(namesIn(dir).filter((n) => n !== Buffer.from('.forkpoint').toString('hex')))
    expect(readFileSync(at(into, BAD_DIR, BAD), 'utf8')).toBe('inner')
    expect(readlinkSync(at(into, Buffer.from('link\xfe', 'latin1')), { encoding: 'buffer' }).equals(BAD)).toBe(true)

    await fs.rm(at(dir, BAD))
    await fs.rm(at(dir, BAD_DIR), { recursive: true })
    expect((await status({ dir, store })).changes.length).toBe(2)
    await checkout({ id: snap.id, dir, store, force: true })
    expect(readFileSync(at(dir, BAD), 'utf8')).toBe('x')
    expect(readFileSync(at(dir, BAD_DIR, BAD), 'utf8')).toBe('inner')
    expect((await status({ dir, store })).clean).toBe(true)
  })

  it('shows them escaped in status', async () => {
    const { dir } = await storeWorkspace({ 'ok.txt': 'ok' })
    expect((await fp(dir, 'snapshot', '-m', 'first')).code).toBe(0)
    await fs.writeFile(at(dir, BAD), 'x')
    await fs.writeFile(join(dir, 'two\nlines'), 'x')
    const r = await fp(dir, 'status')
    expect(r.stdout).toContain('A "bad\\xffname"')
    expect(r.stdout).toContain('A "two\\nlines"')
  })

  it('refuses a tree whose name escapes bytes that are valid UTF-8 (two names for one file)', async () => {
    const { dir, store } = await storeWorkspace({})
    const blob = await store.writeBlob(Buffer.from('x'))
    const tree = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [{ name: '\udcc3\udca9', type: 'file', mode: 0o644, size: 1, blob }] })
    const id = await store.writeObject(makeSnapshot({ parents: [], tree, message: 'hostile' }))
    const into = join(tempDir('into'), 'out')
    await expect(checkout({ id, dir, store, into })).rejects.toSatisfy((e) => e instanceof UnsafePathError || e instanceof MalformedObjectError)
  })
})
