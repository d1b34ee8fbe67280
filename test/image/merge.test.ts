import { createHash } from 'node:crypto'
import { existsSync, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Digest, type Snapshot, type Store, checkout, createTag, openEffects, snapshotWorkspace, status } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { readHead, readRef, updateRef } from '../../src/store/refs.js'
import { readSnapshot, readTree } from '../../src/world/tree/readObjects.js'
import type { Ledger } from '../../src/objects/Ledger.js'
import { abortMerge } from '../../src/image/abortMerge.js'
import { continueMerge } from '../../src/image/continueMerge.js'
import { merge } from '../../src/image/merge.js'
import { MERGE_DRAFT_REF, MERGE_STATE } from '../../src/world/merge/mergeState.js'
import { fpInProcess as fp, fpJsonInProcess as fpJson } from '../helpers/cli.js'
import { type DirState, dirState, storeWorkspace } from '../helpers/workspace.js'

type Files = Record<string, string | Buffer | null | { symlink: string }>

/** Write, replace (string, Buffer, symlink) or remove (null) files in the workspace. */
async function write(dir: string, files: Files): Promise<void> {
  for (const [rel, spec] of Object.entries(files)) {
    const path = join(dir, rel)
    await fs.rm(path, { recursive: true, force: true })
    if (spec === null) continue
    await fs.mkdir(join(path, '..'), { recursive: true })
    if (typeof spec === 'object' && 'symlink' in spec) await fs.symlink(spec.symlink, path)
    else await fs.writeFile(path, spec)
  }
}

/**
 * A real workspace whose `main` and `other` branches parted at a common snapshot: `other`
 * got `theirs` (checked out, written, snapshotted), then `main` got `ours`, and the
 * workspace is back on main, clean.
 */
async function diverged(base: Files, ours: Files | null, theirs: Files | null): Promise<{ dir: string; store: Store; base: Digest; ours: Digest; theirs: Digest }> {
  const { dir, store } = await storeWorkspace({})
  await write(dir, base)
  const baseId = (await snapshotWorkspace({ dir, message: 'base' })).id
  await updateRef({ store, name: 'refs/heads/other', id: baseId, message: 'branch' })
  let theirsId = baseId
  if (theirs) {
    await checkout({ dir, id: 'other' })
    await write(dir, theirs)
    theirsId = (await snapshotWorkspace({ dir, message: 'theirs' })).id
    await checkout({ dir, id: 'main' })
  }
  let oursId = baseId
  if (ours) {
    await write(dir, ours)
    oursId = (await snapshotWorkspace({ dir, message: 'ours' })).id
  }
  return { dir, store, base: baseId, ours: oursId, theirs: theirsId }
}

/** Every file of the workspace hashed, so a restore is checked byte for byte. */
async function hashed(dir: string): Promise<Record<string, string>> {
  const state: DirState = await dirState(dir)
  return Object.fromEntries(Object.entries(state).map(([path, e]) => [path, createHash('sha256').update(JSON.stringify(e)).digest('hex')]))
}

/** The paths of a snapshot's files, sorted. */
async function readFiles(store: Store, id: Digest): Promise<string[]> {
  const tree = await readTree(store, (await readSnapshot(store, id)).world.tree)
  return tree.entries.map((e) => e.name).sort()
}

const read = (dir: string, path: string) => fs.readFile(join(dir, path), 'utf8')

describe('merge into HEAD (the workspace)', () => {
  it("merges a diverged history: the files merged line by line, HEAD's branch at a snapshot with both parents", async () => {
    const h = await diverged({ 'f.txt': '1\n2\n3\n' }, { 'f.txt': 'one\n2\n3\n', 'a.txt': 'a\n' }, { 'f.txt': '1\n2\nthree\n', 'b.txt': 'b\n' })
    const result = await merge({ dir: h.dir, from: 'other' })
    expect(result).toMatchObject({ outcome: 'merged', ref: 'refs/heads/main', inProgress: false })
    if (result.outcome !== 'merged') return
    expect(result.layers.map((l) => l.summary)).toEqual(['world: clean, 1 merged line by line'])
    expect(await readRef(h.store, 'refs/heads/main')).toBe(result.id)
    expect(await readHead(h.store)).toEqual({ type: 'symbolic', ref: 'refs/heads/main' })
    expect((await readSnapshot(h.store, result.id)).parents).toEqual([h.ours, h.theirs])
    expect(await read(h.dir, 'f.txt')).toBe('one\n2\nthree\n')
    expect(await read(h.dir, 'a.txt')).toBe('a\n')
    expect(await read(h.dir, 'b.txt')).toBe('b\n')
    expect(await status({ dir: h.dir })).toMatchObject({ clean: true, merge: null })
  })

  it('fast-forwards when HEAD is behind: HEAD moves, the files follow', async () => {
    const h = await diverged({ 'f.txt': '1\n' }, null, { 'f.txt': '2\n', 'g.txt': 'g\n' })
    const result = await merge({ dir: h.dir, from: 'other' })
    expect(result).toMatchObject({ outcome: 'fast-forward', id: h.theirs })
    expect(await readRef(h.store, 'refs/heads/main')).toBe(h.theirs)
    expect(await read(h.dir, 'f.txt')).toBe('2\n')
    expect(await read(h.dir, 'g.txt')).toBe('g\n')
    expect((await status({ dir: h.dir })).clean).toBe(true)
  })

  it("does nothing when FROM is already in HEAD's history", async () => {
    const h = await diverged({ 'f.txt': '1\n' }, { 'f.txt': '2\n' }, null)
    const before = await hashed(h.dir)
    expect(await merge({ dir: h.dir, from: 'other' })).toMatchObject({ outcome: 'up-to-date', id: h.ours })
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
    expect(await hashed(h.dir)).toEqual(before)
  })

  it('refuses a dirty workspace (exit 3) and changes nothing', async () => {
    const h = await diverged({ 'f.txt': '1\n2\n3\n' }, { 'f.txt': 'one\n2\n3\n' }, { 'f.txt': '1\n2\nthree\n' })
    await write(h.dir, { 'f.txt': 'uncommitted\n' })
    const before = await hashed(h.dir)
    await expect(merge({ dir: h.dir, from: 'other' })).rejects.toMatchObject({ code: 'DirtyWorkspaceError', exitCode: 3 })
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
    expect(await hashed(h.dir)).toEqual(before)
    expect(existsSync(h.store.path(MERGE_STATE))).toBe(false)
  })

  it('refuses unrelated images (exit 2) unless --allow-unrelated, then merges against an empty base', async () => {
    const h = await diverged({ 'f.txt': '1\n' }, { 'f.txt': '2\n' }, null)
    const loneTree = await h.store.writeObject({
      kind: 'tree',
      schemaVersion: 1,
      entries: [{ name: 'lone.txt', type: 'file', mode: 0o644, size: 5, blob: await h.store.writeBlob(Buffer.from('lone\n')) }],
    })
    const lone = await h.store.writeObject(makeSnapshot({ parents: [], tree: loneTree, message: 'lone' }))
    await expect(merge({ dir: h.dir, from: lone })).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
    const cli = await fp(h.dir, 'merge', lone)
    expect(cli.code).toBe(2)
    expect(cli.stderr).toContain('--allow-unrelated')
    const result = await merge({ dir: h.dir, from: lone, allowUnrelated: true })
    expect(result.outcome).toBe('merged')
    expect(await read(h.dir, 'lone.txt')).toBe('lone\n')
    expect(await read(h.dir, 'f.txt')).toBe('2\n')
  })
})

describe('a merge that stops on conflicts', () => {
  it("leaves git's diff3 markers in the file and the merge in progress; --continue refuses while markers remain, then writes the merge with both parents", async () => {
    const h = await diverged({ 'f.txt': '1\n2\n3\n', 'k.txt': 'k\n' }, { 'f.txt': '1\nours\n3\n' }, { 'f.txt': '1\ntheirs\n3\n', 'k.txt': 'kk\n' })
    const result = await merge({ dir: h.dir, from: 'other' })
    expect(result).toMatchObject({ outcome: 'conflict', inProgress: true })
    expect(result.layers.map((l) => l.summary)).toEqual(['world: conflict (1 path: f.txt)'])
    const text = await read(h.dir, 'f.txt')
    expect(text).toMatch(/^1\n<<<<<<< [0-9a-f]+\nours\n\|\|\|\|\|\|\| [0-9a-f]+\n2\n=======\ntheirs\n>>>>>>> [0-9a-f]+\n3\n$/)
    expect(await read(h.dir, 'k.txt')).toBe('kk\n') // the clean part of the merge is in place
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
    expect((await status({ dir: h.dir })).merge).toEqual({ theirs: h.theirs, conflicts: ['f.txt'] })
    expect((await fp(h.dir, 'status')).stdout).toContain('merge --continue')

    await expect(merge({ dir: h.dir, from: 'other' })).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
    await expect(continueMerge({ dir: h.dir })).rejects.toMatchObject({ code: 'MergeConflictError', exitCode: 3, data: { paths: ['f.txt'] } })
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)

    await write(h.dir, { 'f.txt': '1\nboth\n3\n' })
    const done = await continueMerge({ dir: h.dir })
    const snapshot = await readSnapshot(h.store, done.id)
    expect(snapshot.parents).toEqual([h.ours, h.theirs])
    expect(await readRef(h.store, 'refs/heads/main')).toBe(done.id)
    expect(await status({ dir: h.dir })).toMatchObject({ clean: true, merge: null })
    expect(existsSync(h.store.path(MERGE_STATE))).toBe(false)
    expect(await readRef(h.store, MERGE_DRAFT_REF)).toBeNull()
    await expect(continueMerge({ dir: h.dir })).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
  })

  it('--continue writes the other layers as the merge decided them: a trace only theirs changed is theirs', async () => {
    const h = await diverged({ 'f.txt': '1\n2\n3\n' }, { 'f.txt': '1\nours\n3\n' }, null)
    const trace = await h.store.writeObject({ kind: 'run', schemaVersion: 1, runId: 'run-theirs', steps: [] })
    await checkout({ dir: h.dir, id: 'other' })
    await write(h.dir, { 'f.txt': '1\ntheirs\n3\n' })
    const theirs = (await snapshotWorkspace({ dir: h.dir, layers: { trace } })).id
    await checkout({ dir: h.dir, id: 'main' })
    const result = await merge({ dir: h.dir, from: 'other' })
    expect(result.layers.map((l) => l.summary)).toEqual(['world: conflict (1 path: f.txt)', 'trace: taken from theirs'])
    await write(h.dir, { 'f.txt': '1\nfixed\n3\n' })
    const done = await continueMerge({ dir: h.dir })
    expect(done.layers.map((l) => l.summary)).toEqual(['world: resolved (1 path fixed by hand)', 'trace: taken from theirs'])
    const snapshot = await readSnapshot(h.store, done.id)
    expect(snapshot).toMatchObject({ parents: [h.ours, theirs], trace })
  })

  it('keeps both versions of a binary file both sides changed: ours at the path, theirs beside it', async () => {
    const bin = (b: number) => Buffer.from([0, 1, 2, b])
    const h = await diverged({ 'img.bin': bin(0) }, { 'img.bin': bin(1) }, { 'img.bin': bin(2) })
    const result = await merge({ dir: h.dir, from: 'other' })
    expect(result.outcome).toBe('conflict')
    if (result.outcome !== 'conflict') return
    expect(result.conflicts).toHaveLength(1)
    const beside = result.conflicts[0]!.kept.theirs!
    expect(beside).toMatch(/^img\.bin~[0-9a-f]+$/)
    expect(await fs.readFile(join(h.dir, 'img.bin'))).toEqual(bin(1))
    expect(await fs.readFile(join(h.dir, beside))).toEqual(bin(2))
    // keep theirs: move it over ours and finish
    await fs.rename(join(h.dir, beside), join(h.dir, 'img.bin'))
    const done = await continueMerge({ dir: h.dir })
    expect((await readSnapshot(h.store, done.id)).parents).toEqual([h.ours, h.theirs])
  })

  it('--continue refuses (exit 3) while a version kept beside a conflict is still there, unless keepLeftovers; it counts only the conflicts fixed by hand', async () => {
    const bin = (b: number) => Buffer.from([0, 1, 2, b])
    const h = await diverged({ 'a.bin': bin(0), 'b.bin': bin(0) }, { 'a.bin': bin(1), 'b.bin': bin(1) }, { 'a.bin': bin(2), 'b.bin': bin(2) })
    const result = await merge({ dir: h.dir, from: 'other' })
    if (result.outcome !== 'conflict') throw new Error(`expected a conflict, got ${result.outcome}`)
    const [a, b] = result.conflicts.map((c) => c.kept.theirs!)
    await expect(continueMerge({ dir: h.dir })).rejects.toMatchObject({ code: 'MergeConflictError', exitCode: 3, data: { paths: [a, b] } })
    await fs.rename(join(h.dir, a!), join(h.dir, 'a.bin')) // a settled: theirs kept; b left as the merge wrote it
    await expect(continueMerge({ dir: h.dir })).rejects.toMatchObject({ code: 'MergeConflictError', exitCode: 3, data: { paths: [b] } })
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
    const done = await continueMerge({ dir: h.dir, keepLeftovers: true })
    expect(done.layers.map((l) => l.summary)).toEqual(['world: resolved (1 path fixed by hand, 1 left as the merge wrote it)'])
    expect(await readFiles(h.store, done.id)).toEqual(['a.bin', 'b.bin', b])
  })

  it('--abort puts the workspace back byte for byte, whatever the user did in between', async () => {
    const h = await diverged(
      { 'f.txt': '1\n2\n3\n', 'img.bin': Buffer.from([0, 0]), 'd/x.txt': 'x\n' },
      { 'f.txt': '1\nours\n3\n', 'img.bin': Buffer.from([0, 1]) },
      { 'f.txt': '1\ntheirs\n3\n', 'img.bin': Buffer.from([0, 2]), 'd/y.txt': 'y\n' },
    )
    const before = await hashed(h.dir)
    expect((await merge({ dir: h.dir, from: 'other' })).outcome).toBe('conflict')
    expect(await hashed(h.dir)).not.toEqual(before)
    await write(h.dir, { 'f.txt': 'half fixed\n', 'new.txt': 'scratch\n', 'd/x.txt': null })
    await abortMerge({ dir: h.dir })
    expect(await hashed(h.dir)).toEqual(before)
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
    expect(await status({ dir: h.dir })).toMatchObject({ clean: true, merge: null })
    await expect(abortMerge({ dir: h.dir })).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
  })
})

describe('merge --into a ref', () => {
  it('merges into a tag in the store only: the tag moves, the workspace and HEAD do not; a conflict there moves nothing (exit 3)', async () => {
    const h = await diverged({ 'f.txt': '1\n2\n3\n' }, { 'f.txt': 'one\n2\n3\n' }, { 'f.txt': '1\n2\nthree\n' })
    await createTag({ store: h.store, name: 'release', id: h.ours })
    const before = await hashed(h.dir)
    const result = await merge({ dir: h.dir, from: 'other', into: 'release', force: true })
    expect(result).toMatchObject({ outcome: 'merged', ref: 'refs/tags/release' })
    if (result.outcome !== 'merged') return
    expect(await readRef(h.store, 'refs/tags/release')).toBe(result.id)
    expect((await readSnapshot(h.store, result.id)).parents).toEqual([h.ours, h.theirs])
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
    expect(await hashed(h.dir)).toEqual(before)

    const c = await diverged({ 'f.txt': '1\n2\n3\n' }, { 'f.txt': '1\nours\n3\n' }, { 'f.txt': '1\ntheirs\n3\n' })
    await createTag({ store: c.store, name: 'release', id: c.ours })
    const cli = await fp(c.dir, 'merge', 'other', '--into', 'release', '-f')
    expect(cli.code).toBe(3)
    expect(cli.stdout).toContain('world: conflict (1 path: f.txt)')
    expect(await readRef(c.store, 'refs/tags/release')).toBe(c.ours)
    expect(existsSync(c.store.path(MERGE_STATE))).toBe(false)
  })
})

describe('merge --into: a tag needs -f, an id is no ref', () => {
  it('refuses to move a tag without -f (RefConflictError, exit 3, as tag refuses), leaving it where it was', async () => {
    const h = await diverged({ 'f.txt': '1\n2\n3\n' }, { 'f.txt': 'one\n2\n3\n' }, { 'f.txt': '1\n2\nthree\n' })
    await createTag({ store: h.store, name: 'release', id: h.ours })
    await expect(merge({ dir: h.dir, from: 'other', into: 'release' })).rejects.toMatchObject({ code: 'RefConflictError', exitCode: 3 })
    const cli = await fp(h.dir, 'merge', 'other', '--into', 'release')
    expect([cli.code, cli.stderr.trim()]).toEqual([3, "forkpoint: merge --into: release is a tag, moved only with -f: 'forkpoint merge FROM --into release -f'"])
    expect(await readRef(h.store, 'refs/tags/release')).toBe(h.ours)
    expect(await merge({ dir: h.dir, from: 'other', into: 'other' })).toMatchObject({ outcome: 'up-to-date' }) // a head needs no -f
  })

  it('refuses an image id, short id or main~1 as --into with a usage error (exit 2) that says so', async () => {
    const h = await diverged({ 'f.txt': '1\n' }, { 'f.txt': '2\n' }, { 'f.txt': '3\n' })
    for (const into of [h.ours, h.ours.slice(7, 19), 'main~1']) {
      const cli = await fp(h.dir, 'merge', 'other', '--into', into)
      expect([cli.code, cli.stderr.trim()], into).toEqual([2, `forkpoint: merge --into takes the name of the head or tag it moves: "${into}" is an image id, not a head or tag`])
    }
    await expect(merge({ dir: h.dir, from: 'other', into: 'nothing-here' })).rejects.toThrow(/"nothing-here" names no head or tag/)
    expect(await readRef(h.store, 'refs/heads/main')).toBe(h.ours)
  })
})

describe('hostile input', () => {
  /** FROM = a snapshot on top of `base` whose root tree is `entries` as given (unchecked). */
  async function planted(store: Store, base: Digest, entries: unknown[]): Promise<Digest> {
    const tree = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries })
    return store.writeObject(makeSnapshot({ parents: [base], tree, message: 'hostile' }))
  }
  const link = (name: string, target: string) => ({ name, type: 'symlink', mode: 0o777, size: Buffer.byteLength(target), target })

  async function expectRefusedWritingNothing(h: { dir: string; store: Store; ours: Digest }, from: string): Promise<void> {
    const before = await hashed(h.dir)
    await expect(merge({ dir: h.dir, from })).rejects.toMatchObject({ exitCode: 5 })
    const cli = await fp(h.dir, 'merge', from)
    expect(cli.code).toBe(5)
    expect(cli.stderr.trim().split('\n')).toHaveLength(1)
    expect(await hashed(h.dir)).toEqual(before)
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
    expect(existsSync(h.store.path(MERGE_STATE))).toBe(false)
    expect(await readRef(h.store, MERGE_DRAFT_REF)).toBeNull()
  }

  it('refuses (exit 5) a FROM with an entry named ..', async () => {
    const h = await diverged({ 'f.txt': '1\n' }, { 'f.txt': '2\n' }, null)
    const from = await planted(h.store, h.base, [{ name: '..', type: 'file', mode: 0o644, size: 5, blob: await h.store.writeBlob(Buffer.from('pwned')) }])
    await expectRefusedWritingNothing(h, from)
  })

  it('refuses (exit 5) a FROM with a chain of symlinks climbing out', async () => {
    const h = await diverged({ 'f.txt': '1\n' }, { 'f.txt': '2\n' }, null)
    const up = await h.store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [link('up', '..')] })
    const from = await planted(h.store, h.base, [
      { name: 'd', type: 'dir', mode: 0o755, size: 0, tree: up },
      { name: 'f.txt', type: 'file', mode: 0o644, size: 2, blob: await h.store.writeBlob(Buffer.from('1\n')) },
      link('x', 'd/up/d/up/..'),
    ])
    await expectRefusedWritingNothing(h, from)
  })

  /** FROM = theirs (or, for a fast-forward, a child of HEAD) with `layer` replaced. */
  async function withLayer(h: { store: Store; theirs: Digest }, layer: string, digest: (snapshot: Snapshot) => Promise<Digest> | Digest): Promise<Digest> {
    const snapshot = await readSnapshot(h.store, h.theirs)
    return h.store.writeObject({ ...snapshot, parents: [h.theirs], [layer]: await digest(snapshot) })
  }

  it('refuses (exit 5) a FROM whose trace is not a run or whose effects are not a ledger, though only FROM changed the layer, merged or fast-forwarded', async () => {
    for (const layer of ['trace', 'effects']) {
      for (const ours of [{ 'f.txt': '2\n' }, null]) {
        const h = await diverged({ 'f.txt': '1\n' }, ours, { 'g.txt': 'g\n' })
        await expectRefusedWritingNothing(h, await withLayer(h, layer, (s) => s.world.tree))
      }
    }
  })

  it('refuses (exit 5) a FROM whose ledger has a broken chain', async () => {
    const h = await diverged({ 'f.txt': '1\n' }, { 'f.txt': '2\n' }, { 'g.txt': 'g\n' })
    const effects = await openEffects({ store: h.store, env: {} })
    const send = effects.tool('email.send', async (m: { to: string }) => ({ sent: m.to }), { class: 'irreversible', key: (m) => `mail:${m.to}` })
    for (const to of ['a@x', 'b@x', 'c@x']) await send({ to })
    const ledger = structuredClone(await h.store.readObject<Ledger>(await effects.ledger(), 'ledger'))
    ledger.entries[1]!.prev = 'f'.repeat(64)
    await expectRefusedWritingNothing(h, await withLayer(h, 'effects', () => h.store.writeObject(ledger)))
  })

  it('refuses (exit 5) a merge whose result leads out though neither side does: ours makes a/b a link to .., theirs adds x -> a/b/../..', async () => {
    const h = await diverged({ 'a/b/f.txt': 'f\n' }, { 'a/b': { symlink: '..' } }, { x: { symlink: 'a/b/../..' } })
    await expectRefusedWritingNothing(h, 'other')
    // the same merge into a branch in the store is refused too: no ref ever names such a tree
    await expect(merge({ dir: h.dir, from: 'other', into: 'main' })).rejects.toMatchObject({ code: 'UnsafePathError', exitCode: 5 })
    expect(await readRef(h.store, 'refs/heads/main')).toBe(h.ours)
  })
})

describe('forkpoint merge (CLI)', () => {
  it('merge --continue names the leftovers and exits 3; --keep-leftovers snapshots them', async () => {
    const h = await diverged({ 'img.bin': Buffer.from([0, 0]) }, { 'img.bin': Buffer.from([0, 1]) }, { 'img.bin': Buffer.from([0, 2]) })
    expect((await fp(h.dir, 'merge', 'other')).code).toBe(3)
    const refused = await fp(h.dir, 'merge', '--continue')
    expect(refused.code).toBe(3)
    expect(refused.stderr).toMatch(/img\.bin~[0-9a-f]+.*--keep-leftovers/)
    const done = await fp(h.dir, 'merge', '--continue', '--keep-leftovers')
    expect(done).toMatchObject({ code: 0 })
    expect(done.stdout).toContain('world: resolved (0 paths fixed by hand, 1 left as the merge wrote it)')
  })

  it('prints one line per layer; a conflict exits 3 and --continue finishes it; --json gives the whole merge', async () => {
    const h = await diverged(
      { 'f.txt': '1\n2\n3\n', 'g.txt': '1\n2\n3\n' },
      { 'f.txt': '1\nours\n3\n', 'g.txt': 'one\n2\n3\n' },
      { 'f.txt': '1\ntheirs\n3\n', 'g.txt': '1\n2\nthree\n' },
    )
    const stopped = await fp(h.dir, 'merge', 'other')
    expect(stopped.code).toBe(3)
    expect(stopped.stdout).toContain('world: conflict (1 path: f.txt)')
    expect(stopped.stderr).toContain('merge --continue')
    expect((await fp(h.dir, 'merge', 'other')).code).toBe(2)
    const refused = await fp(h.dir, 'merge', '--continue')
    expect(refused.code).toBe(3)
    expect(refused.stderr).toContain('f.txt')
    await write(h.dir, { 'f.txt': '1\nfixed\n3\n' })
    const done = await fpJson<{ outcome: string; id: string }>(h.dir, 'merge', '--continue')
    expect(done.code).toBe(0)
    expect(done.json.outcome).toBe('merged')
    expect((await readSnapshot(h.store, done.json.id as Digest)).parents).toEqual([h.ours, h.theirs])
    expect(await read(h.dir, 'g.txt')).toBe('one\n2\nthree\n')

    const clean = await diverged({ 'f.txt': '1\n2\n3\n' }, { 'f.txt': 'one\n2\n3\n' }, { 'f.txt': '1\n2\nthree\n' })
    const json = await fpJson<{ outcome: string; layers: unknown[]; bases: string[] }>(clean.dir, 'merge', 'other')
    expect(json.code).toBe(0)
    expect(json.json).toMatchObject({ outcome: 'merged', bases: [clean.base], layers: [{ layer: 'world', outcome: 'merged' }] })
    expect((await fp(clean.dir, 'merge', 'other')).stdout).toContain('already up to date')
  })
})
