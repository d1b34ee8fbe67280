import { promises as fs } from 'node:fs'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Digest, MalformedObjectError, PathLimitError, type Store, UnsafePathError, checkout, snapshotWorkspace, status } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { readRef } from '../../src/store/refs.js'
import { type CheckoutStep, recoverCheckout, writeJournal } from '../../src/world/checkout/checkoutJournal.js'
import { sha256 } from '../../src/objects/digest.js'
import { fp } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { dirState, listOrNull, storeWorkspace } from '../helpers/workspace.js'

/** A place outside every target; nothing may ever appear in it or vanish from it. */
async function makeSentinel(): Promise<{ dir: string; intact(): Promise<void> }> {
  const dir = tempDir('sentinel')
  await fs.writeFile(join(dir, 'precious'), 'do not touch')
  return {
    dir,
    async intact() {
      expect(await fs.readdir(dir)).toEqual(['precious'])
      expect(await fs.readFile(join(dir, 'precious'), 'utf8')).toBe('do not touch')
    },
  }
}

/** Write raw entries as a tree object (unchecked, unsorted as given) and a snapshot on it. */
async function hostileSnapshot(store: Store, entries: unknown[]): Promise<Digest> {
  const tree = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries })
  return store.writeObject(makeSnapshot({ parents: [], tree, message: 'hostile' }))
}

async function fileEntry(store: Store, name: string, content = 'pwned'): Promise<Record<string, unknown>> {
  return { name, type: 'file', mode: 0o644, size: content.length, blob: await store.writeBlob(Buffer.from(content)) }
}

async function dirEntry(store: Store, name: string, inner: unknown[]): Promise<Record<string, unknown>> {
  return { name, type: 'dir', mode: 0o755, size: 0, tree: await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: inner }) }
}

/** A directory `depth` levels deep (d/d/d/...), built from the bottom up. */
async function deepDir(store: Store, depth: number): Promise<Record<string, unknown>> {
  let entry = await fileEntry(store, 'bottom')
  for (let i = 0; i < depth; i++) entry = await dirEntry(store, 'd', [entry])
  return entry
}

const symlink = (name: string, target: string) => ({ name, type: 'symlink', mode: 0o777, size: Buffer.byteLength(target), target })

type Case = { title: string; error: typeof UnsafePathError | typeof MalformedObjectError | typeof PathLimitError; entries: (store: Store, sentinel: string) => Promise<unknown[]> }

const cases: Case[] = [
  { title: 'a file named ..', error: UnsafePathError, entries: async (s) => [await fileEntry(s, '..')] },
  { title: 'a directory named .. holding a file', error: UnsafePathError, entries: async (s) => [await dirEntry(s, '..', [await fileEntry(s, 'pwned')])] },
  { title: 'a name with a slash climbing to the sentinel', error: UnsafePathError, entries: async (s, sentinel) => [await fileEntry(s, `../../../../../../..${sentinel}/pwned`)] },
  { title: 'a name with a slash', error: UnsafePathError, entries: async (s) => [await fileEntry(s, 'a/b')] },
  { title: 'an absolute name', error: UnsafePathError, entries: async (s, sentinel) => [await fileEntry(s, `${sentinel}/pwned`)] },
  { title: 'an empty name', error: UnsafePathError, entries: async (s) => [await fileEntry(s, '')] },
  { title: 'a name with a NUL byte', error: UnsafePathError, entries: async (s) => [await fileEntry(s, 'a\0b')] },
  { title: 'a hostile name one level down', error: UnsafePathError, entries: async (s) => [await dirEntry(s, 'ok', [await fileEntry(s, '..')])] },
  { title: 'duplicate entries', error: MalformedObjectError, entries: async (s) => [await fileEntry(s, 'x', 'one'), await fileEntry(s, 'x', 'two')] },
  { title: 'unsorted entries', error: MalformedObjectError, entries: async (s) => [await fileEntry(s, 'b'), await fileEntry(s, 'a')] },
  { title: 'a set-uid file mode', error: MalformedObjectError, entries: async (s) => [{ ...(await fileEntry(s, 'x')), mode: 0o4755 }] },
  { title: 'an unknown entry type', error: MalformedObjectError, entries: async (s) => [{ ...(await fileEntry(s, 'x')), type: 'fifo' }] },
  {
    title: 'a directory whose tree is a blob',
    error: MalformedObjectError,
    entries: async (s) => [{ name: 'd', type: 'dir', mode: 0o755, size: 0, tree: await s.writeBlob(Buffer.from('not a tree')) }],
  },
  { title: 'an absolute symlink', error: UnsafePathError, entries: async (_s, sentinel) => [symlink('esc', sentinel)] },
  { title: 'a symlink climbing out (../../x)', error: UnsafePathError, entries: async (_s) => [symlink('esc', '../../x')] },
  { title: 'a nested symlink climbing out', error: UnsafePathError, entries: async (s) => [await dirEntry(s, 'a', [await dirEntry(s, 'b', [symlink('esc', '../../../x')])])] },
  { title: 'a name of 300 bytes', error: PathLimitError, entries: async (s) => [await fileEntry(s, 'a.txt'), await fileEntry(s, 'n'.repeat(300))] },
  { title: 'a tree 3,000 directories deep', error: PathLimitError, entries: async (s) => [await deepDir(s, 3000)] },
  {
    title: 'a .forkpoint directory planting a tag',
    error: UnsafePathError,
    entries: async (s) => [await dirEntry(s, '.forkpoint', [await dirEntry(s, 'refs', [await dirEntry(s, 'tags', [await fileEntry(s, 'planted', `${sha256('x')}\n`)])])])],
  },
  { title: 'a .forkpoint file', error: UnsafePathError, entries: async (s) => [await fileEntry(s, '.forkpoint')] },
  {
    title: 'a .forkpoint one level down',
    error: UnsafePathError,
    entries: async (s) => [await dirEntry(s, 'sub', [await dirEntry(s, '.forkpoint', [await fileEntry(s, 'HEAD')])])],
  },
  {
    title: 'a symlink climbing out through a -> . (a/a/a/../../../..)',
    error: UnsafePathError,
    entries: async () => [symlink('a', '.'), symlink('c', 'a/a/a/a/a/a/a/a/../../../../../../../../etc')],
  },
  { title: 'a chain of symlinks climbing out', error: UnsafePathError, entries: async (s) => [await dirEntry(s, 'd', [symlink('up', '..')]), symlink('x', 'd/up/d/up/..')] },
  {
    title: 'a symlink into a linked directory climbing out',
    error: UnsafePathError,
    entries: async (s) => [await dirEntry(s, 'd', [await dirEntry(s, 'e', [])]), symlink('l', 'd/e'), symlink('x', 'l/../../..')],
  },
  { title: 'a symlink loop', error: UnsafePathError, entries: async () => [symlink('x', 'y'), symlink('y', 'x')] },
]

describe('hostile trees', () => {
  for (const c of cases) {
    it(`refuses ${c.title}: checkout --into fails with ${c.error.name}, writes nothing anywhere`, async () => {
      const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
      const sentinel = await makeSentinel()
      const id = await hostileSnapshot(store, await c.entries(store, sentinel.dir))
      const parent = join(tempDir('into'), 'p', 'q')
      await fs.mkdir(parent, { recursive: true })
      const target = join(parent, 'target')

      const err = await checkout({ dir, id, into: target }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(c.error)
      expect((err as UnsafePathError).exitCode).toBe(5)
      expect(await listOrNull(target)).toBeNull()
      expect(await fs.readdir(parent)).toEqual([]) // no temp dir, no probe file left behind
      await sentinel.intact()

      // The same through the CLI: exit 5, one line on stderr.
      const cli = await fp(dir, 'checkout', id, '--into', target)
      expect(cli.code).toBe(5)
      expect(cli.stderr.trim().split('\n')).toHaveLength(1)
      expect(cli.stderr).toMatch(/^forkpoint: /)
      expect(await fs.readdir(parent)).toEqual([])
      await sentinel.intact()
    })

    it(`refuses ${c.title}: in-place checkout fails with ${c.error.name}, the workspace untouched`, async () => {
      const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'd/b.txt': 'b' })
      const head = (await snapshotWorkspace({ dir })).id
      const sentinel = await makeSentinel()
      const id = await hostileSnapshot(store, await c.entries(store, sentinel.dir))
      const before = await dirState(dir)

      await expect(checkout({ dir, id, force: true })).rejects.toBeInstanceOf(c.error)
      expect(await dirState(dir)).toEqual(before)
      expect(await readRef(store, 'HEAD')).toBe(head)
      expect(await fs.readdir(store.path('tmp'))).toEqual([]) // staging removed
      await sentinel.intact()
    })
  }

  it('accepts symlinks that stay inside however they get there: through links, up and down again', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    const entries = [
      await dirEntry(store, 'd', [symlink('up', '..'), symlink('x', '../src/x')]),
      symlink('lib', 'src'),
      symlink('self', '.'),
      await dirEntry(store, 'src', [await fileEntry(store, 'x')]),
      symlink('via', 'd/up/lib/../src/x'),
    ]
    const target = join(tempDir('into'), 'target')
    await checkout({ dir, id: await hostileSnapshot(store, entries), into: target })
    expect(await fs.readFile(join(target, 'via'), 'utf8')).toBe('pwned')
  })

  it('a planted .forkpoint never reaches the live store, in place either', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    await snapshotWorkspace({ dir })
    const planted = await dirEntry(store, '.forkpoint', [await dirEntry(store, 'refs', [await dirEntry(store, 'tags', [await fileEntry(store, 'planted', `${sha256('x')}\n`)])])])
    const id = await hostileSnapshot(store, [await fileEntry(store, 'a.txt', 'a'), planted])
    const cli = await fp(dir, 'checkout', id, '--force')
    expect(cli.code).toBe(5)
    expect(cli.stderr).toContain('.forkpoint')
    expect(await listOrNull(store.path('refs', 'tags'))).not.toContain('planted')
  })

  it('allows an outside symlink only when asked (allowExternalSymlinks), and still writes nothing through it', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    const sentinel = await makeSentinel()
    const id = await hostileSnapshot(store, [symlink('esc', sentinel.dir)])
    const target = join(tempDir('into'), 'target')
    await checkout({ dir, id, into: target, allowExternalSymlinks: true })
    expect(await fs.readlink(join(target, 'esc'))).toBe(sentinel.dir)
    await sentinel.intact()
  })
})

describe('a directory swapped for a symlink between planning and running an in-place checkout', () => {
  /** A workspace with `d/x`, and a checkout journal (as `checkout` writes it) whose steps touch `d/...`. */
  async function journalThroughSwappedDir(steps: CheckoutStep[]) {
    const { dir, store } = await storeWorkspace({ 'd/x': 'mine', 'keep.txt': 'k' })
    const head = (await snapshotWorkspace({ dir })).id
    const sentinel = await makeSentinel()
    const staging = store.tempPath('checkout')
    await fs.mkdir(staging)
    await fs.writeFile(join(staging, '0'), 'pwned')
    await writeJournal(store, { kind: 'checkout-journal', schemaVersion: 1, workspace: dir, staging: basename(staging), steps, head: `${sha256('other')}\n` })
    // The swap: `d` becomes a symlink to the sentinel after the plan was made.
    await fs.rm(join(dir, 'd'), { recursive: true })
    await fs.symlink(sentinel.dir, join(dir, 'd'))
    return { dir, store, head, sentinel }
  }

  // a place step's file is staged at `<staging>/<its index>`: `0` here
  const stepSets: Array<[string, CheckoutStep[]]> = [
    ['placing a file', [{ op: 'place', path: 'd/pwned' }]],
    ['replacing a file', [{ op: 'place', path: 'd/precious' }]],
    ['removing a file', [{ op: 'remove', path: 'd/precious' }]],
    ['making a directory', [{ op: 'mkdir', path: 'd/newdir' }]],
  ]

  for (const [what, steps] of stepSets) {
    it(`refuses ${what} through it (UnsafePathError) once, sets the journal aside, nothing written or removed outside`, async () => {
      const { dir, store, head, sentinel } = await journalThroughSwappedDir(steps)
      await expect(recoverCheckout(store, dir)).rejects.toBeInstanceOf(UnsafePathError)
      await sentinel.intact()
      // Refused once, then set aside: the workspace is not wedged.
      expect(await fs.readFile(store.path('checkout-journal.abandoned.json'), 'utf8')).toContain('refusing')
      const cli = await fp(dir, 'status')
      expect(cli.code).toBe(0)
      await sentinel.intact()
      expect(await readRef(store, 'HEAD')).toBe(head)
      expect(await fs.readlink(join(dir, 'd'))).toBe(sentinel.dir)
    })
  }

  it('the library reports it too: status refuses rather than guessing', async () => {
    const { dir, sentinel } = await journalThroughSwappedDir([{ op: 'place', path: 'd/pwned' }])
    await expect(status({ dir })).rejects.toBeInstanceOf(UnsafePathError)
    await sentinel.intact()
  })
})

describe('a file swapped for a symlink to outside between planning and running an in-place checkout', () => {
  it('replaces, removes or turns into a directory the link itself, never what it points to', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'old', 'gone.txt': 'g', newdir: 'file' })
    await snapshotWorkspace({ dir })
    const sentinel = await makeSentinel()
    const staging = store.tempPath('checkout')
    await fs.mkdir(staging)
    await fs.writeFile(join(staging, '0'), 'new content')
    const steps: CheckoutStep[] = [
      { op: 'place', path: 'a.txt' },
      { op: 'remove', path: 'gone.txt' },
      { op: 'mkdir', path: 'newdir' },
    ]
    const target = sha256('target')
    await writeJournal(store, { kind: 'checkout-journal', schemaVersion: 1, workspace: dir, staging: basename(staging), steps, head: `${target}\n` })
    for (const [name, to] of [
      ['a.txt', join(sentinel.dir, 'precious')],
      ['gone.txt', sentinel.dir],
      ['newdir', sentinel.dir],
    ] as const) {
      await fs.rm(join(dir, name))
      await fs.symlink(to, join(dir, name))
    }
    expect(await recoverCheckout(store, dir)).toBe(true)
    await sentinel.intact()
    expect(await dirState(dir)).toEqual({
      'a.txt': { type: 'file', mode: 0o644, content: Buffer.from('new content').toString('base64') },
      newdir: { type: 'dir', mode: 0o755 },
    })
    expect(await readRef(store, 'HEAD')).toBe(target)
  })
})
