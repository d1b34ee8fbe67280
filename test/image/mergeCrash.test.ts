import { existsSync, promises as fs } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkout, snapshotWorkspace, status } from '../../src/index.js'
import { readRef, updateRef } from '../../src/store/refs.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { sha256 } from '../../src/objects/digest.js'
import { applyTree } from '../../src/world/checkout/checkout.js'
import { LIB } from '../helpers/cli.js'
import { type CrashPoint, runUntilCrash } from '../helpers/crasher.js'
import { dirState, storeWorkspace } from '../helpers/workspace.js'

/** main and other parted at a base; each changed other files, so the merge is clean and places several. */
async function diverged() {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' })
  const base = (await snapshotWorkspace({ dir })).id
  await updateRef({ store, name: 'refs/heads/other', id: base, message: 'branch' })
  await checkout({ dir, id: 'other' })
  for (const f of ['b.txt', 'c.txt', 'd.txt']) await fs.writeFile(join(dir, f), `theirs ${f}\n`)
  const theirs = (await snapshotWorkspace({ dir })).id
  await checkout({ dir, id: 'main' })
  await fs.writeFile(join(dir, 'a.txt'), 'ours\n')
  const ours = (await snapshotWorkspace({ dir })).id
  return { dir, store, ours, theirs }
}

async function crashMerge(dir: string, point: CrashPoint): Promise<void> {
  await runUntilCrash(join(dirname(LIB), 'image', 'merge.js'), dir, "await lib.merge({ dir, from: 'other' })", point)
}

describe('a merge into the workspace cut short', () => {
  it('before its journal is written: HEAD and the files are as they were', async () => {
    const h = await diverged()
    const before = await dirState(h.dir)
    await crashMerge(h.dir, { at: 'before-journal' })
    expect(await status({ dir: h.dir })).toMatchObject({ clean: true, head: h.ours })
    expect(await dirState(h.dir)).toEqual(before)
  })

  it("after placing one file: the next command finishes it, HEAD's branch at the merge and the files merged", async () => {
    const h = await diverged()
    await crashMerge(h.dir, { at: 'after-steps', placed: 1 })
    const after = await status({ dir: h.dir })
    expect(after.clean).toBe(true)
    expect(after.headName).toBe('main')
    const merged = await readSnapshot(h.store, after.head!)
    expect(merged.parents).toEqual([h.ours, h.theirs])
    expect(await fs.readFile(join(h.dir, 'a.txt'), 'utf8')).toBe('ours\n')
    expect(await fs.readFile(join(h.dir, 'd.txt'), 'utf8')).toBe('theirs d.txt\n')
  })
})

describe('applyTree with a ref to move', () => {
  it('refuses (RefConflictError, exit 3) when the ref moved since the plan, touching no file and leaving no journal', async () => {
    const h = await diverged()
    const before = await dirState(h.dir)
    const tree = (await readSnapshot(h.store, h.theirs)).world.tree
    const move = { name: 'refs/heads/main', id: h.theirs, expected: sha256('moved meanwhile'), message: 'merge' }
    await expect(applyTree({ store: h.store, workspace: h.dir, tree, head: 'ref: refs/heads/main\n', ref: move, force: false })).rejects.toMatchObject({
      code: 'RefConflictError',
      exitCode: 3,
    })
    expect(await dirState(h.dir)).toEqual(before)
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
    expect(existsSync(h.store.path('checkout-journal.json'))).toBe(false)
    expect(await fs.readdir(h.store.path('tmp'))).toEqual([])
  })
})
