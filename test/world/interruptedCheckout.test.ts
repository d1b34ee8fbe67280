import nodeFs, { promises as fs } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { type Digest, checkout, gc, snapshotWorkspace, status } from '../../src/index.js'
import { readRef } from '../../src/store/refs.js'
import { sha256 } from '../../src/objects/digest.js'
import { LIB } from '../helpers/cli.js'
import { type CrashPoint, runUntilCrash } from '../helpers/crasher.js'
import { tempDir } from '../helpers/tmp.js'
import { type DirState, dirState, listOrNull, storeWorkspace } from '../helpers/workspace.js'

async function crashCheckout(dir: string, id: Digest, point: CrashPoint): Promise<void> {
  await runUntilCrash(LIB, dir, `await lib.checkout({ dir, id: ${JSON.stringify(id)}, force: true })`, point)
}

/** Two snapshots whose difference needs every kind of step: remove, mkdir, place over, place new. */
async function twoSnapshots(): Promise<{ dir: string; a: Digest; b: Digest; stateA: DirState; stateB: DirState; store: Awaited<ReturnType<typeof storeWorkspace>>['store'] }> {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'a1', 'b.txt': 'b1', 'gone.txt': 'x', 'sub/c.txt': 'c1', 'was-dir/f': 'f', 'same.txt': 's' })
  const a = (await snapshotWorkspace({ dir })).id
  const stateA = await dirState(dir)
  await fs.writeFile(join(dir, 'a.txt'), 'a2 changed')
  await fs.writeFile(join(dir, 'b.txt'), 'b2 changed')
  await fs.rm(join(dir, 'gone.txt'))
  await fs.writeFile(join(dir, 'sub/c.txt'), 'c2 changed')
  await fs.mkdir(join(dir, 'newdir/deeper'), { recursive: true })
  await fs.writeFile(join(dir, 'newdir/deeper/n.txt'), 'n')
  await fs.rm(join(dir, 'was-dir'), { recursive: true })
  await fs.writeFile(join(dir, 'was-dir'), 'now a file')
  const b = (await snapshotWorkspace({ dir })).id
  const stateB = await dirState(dir)
  await checkout({ dir, id: a })
  expect(await dirState(dir)).toEqual(stateA)
  return { dir, store, a, b, stateA, stateB }
}

describe('an in-place checkout interrupted by a crash', () => {
  it('before its journal was written leaves the workspace and HEAD as they were', async () => {
    const { dir, store, a, b, stateA } = await twoSnapshots()
    await crashCheckout(dir, b, { at: 'before-journal' })
    expect(await dirState(dir)).toEqual(stateA)
    expect(await readRef(store, 'HEAD')).toBe(a)
    const st = await status({ dir })
    expect(st.clean).toBe(true)
    expect(await dirState(dir)).toEqual(stateA)
  })

  // Crash after 1, 2, ... of the 5 placements (a new directory is placed whole) (the last: all placed, HEAD not yet moved).
  for (const k of [1, 2, 3, 4, 5]) {
    const recoverer = (['status', 'snapshot', 'checkout'] as const)[k % 3]!
    it(`after ${k} placement(s) is finished by the next ${recoverer}`, async () => {
      const { dir, store, b, stateA, stateB } = await twoSnapshots()
      await crashCheckout(dir, b, { at: 'after-steps', placed: k })
      expect(await fs.stat(store.path('checkout-journal.json'))).toBeTruthy()
      expect(await dirState(dir)).not.toEqual(stateA) // it really was cut short midway
      if (recoverer === 'status') expect((await status({ dir })).clean).toBe(true)
      if (recoverer === 'snapshot') expect(await snapshotWorkspace({ dir })).toMatchObject({ id: b, created: false })
      if (recoverer === 'checkout') await checkout({ dir, id: b })
      expect(await dirState(dir)).toEqual(stateB)
      expect(await readRef(store, 'HEAD')).toBe(b)
      expect(await listOrNull(store.path('checkout-journal.json'))).toBeNull()
      expect(await fs.readdir(store.path('tmp'))).toEqual([])
    })
  }
})

describe('a crashed checkout left for a while', () => {
  it('keeps its staged files through gc, so the next command still finishes it', async () => {
    const { dir, store, b, stateB } = await twoSnapshots()
    await crashCheckout(dir, b, { at: 'after-steps', placed: 2 })
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000)
    for (const name of await fs.readdir(store.path('tmp'))) await fs.utimes(store.path('tmp', name), twoHoursAgo, twoHoursAgo)
    await gc({ store })
    expect((await status({ dir })).clean).toBe(true)
    expect(await dirState(dir)).toEqual(stateB)
    expect(await readRef(store, 'HEAD')).toBe(b)
  })
})

describe('an in-place checkout failing midway (an I/O error, not a crash)', () => {
  it('keeps its journal and staged files, so the next command still finishes it', async () => {
    const { dir, store, b, stateB } = await twoSnapshots()
    const rename = nodeFs.renameSync
    let calls = 0
    const spy = vi.spyOn(nodeFs, 'renameSync').mockImplementation((from, to) => {
      if (String(to).startsWith(`${dir}/sub/`) && calls++ === 0) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' })
      rename(from, to)
    })
    syncBuiltinESMExports()
    try {
      await expect(checkout({ dir, id: b })).rejects.toThrow(/EIO/)
    } finally {
      spy.mockRestore()
      syncBuiltinESMExports()
    }
    expect((await status({ dir })).clean).toBe(true)
    expect(await dirState(dir)).toEqual(stateB)
    expect(await readRef(store, 'HEAD')).toBe(b)
  })
})

describe('checkout --into failing midway', () => {
  it('leaves neither the target nor a temp directory', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 40; i++) files[`d${i % 4}/f${i}.txt`] = `content ${i}`
    const { dir, store } = await storeWorkspace(files)
    const snap = await snapshotWorkspace({ dir })
    // Lose one file's blob: the copy finds it missing partway through and must undo everything.
    await fs.rm(store.objectPath(sha256('content 27')))
    const parent = tempDir('into')
    const target = join(parent, 'out')
    await expect(checkout({ dir, id: snap.id, into: target, method: 'copy' })).rejects.toThrow()
    expect(await fs.readdir(parent)).toEqual([])
  })
})
