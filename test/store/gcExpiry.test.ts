import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { UsageError, checkout, createTag, deleteTag, gc, removeRuns, snapshotWorkspace, verify } from '../../src/index.js'
import { RunStore } from '../../src/trace/core/RunStore.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { makeTree } from '../../src/objects/Tree.js'
import { readReflog } from '../../src/store/reflog.js'
import { fp, fpJson } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { randomFiles } from '../registry/fixtures.js'
import { makeRun } from '../trace/runFixtures.js'

const DAY = 86_400_000
const later = (days: number) => new Date(Date.now() + days * DAY)

/** Bytes the store's objects take on disk. */
async function objectBytesOnDisk(storeRoot: string): Promise<number> {
  let total = 0
  const walk = async (dir: string): Promise<void> => {
    for (const e of await fs.readdir(dir, { withFileTypes: true })) {
      const path = join(dir, e.name)
      if (e.isDirectory()) await walk(path)
      else total += (await fs.stat(path)).blocks * 512
    }
  }
  await walk(join(storeRoot, 'objects'))
  return total
}

/** A store whose tag `old` named a 400 KB image outside main's history (as a pulled one), since deleted. */
async function deletedTagStore() {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'current' })
  const current = await snapshotWorkspace({ dir })
  const [big] = Object.values(randomFiles(1, 400_000, 7))
  const blob = await store.writeBlob(big!)
  const tree = await store.writeObject({ ...makeTree([{ name: 'big.bin', type: 'file', mode: 0o644, size: big!.length, blob }]) })
  const old = { id: await store.writeObject(makeSnapshot({ parents: [], tree, message: 'old' })) }
  await createTag({ store, name: 'old', id: old.id })
  await deleteTag({ store, name: 'old' })
  return { dir, store, old, current }
}

describe('gc expires reflogs and gives the space back', () => {
  it("reclaims a deleted tag's snapshot once its reflog entries are older than --prune (default 90 days)", async () => {
    const { dir, store, old, current } = await deletedTagStore()
    const before = await objectBytesOnDisk(store.root)

    expect((await gc({ store })).removed).toEqual([]) // the reflogs still name it
    expect((await gc({ store, now: later(89) })).removed).toEqual([])
    const dry = await gc({ store, now: later(91), dryRun: true })
    expect(dry.removed).toContain(old.id)
    expect(await store.has(old.id)).toBe(true)

    const result = await gc({ store, now: later(91) })
    expect(result.removed).toContain(old.id)
    expect(result.expiredReflogEntries).toBeGreaterThan(0)
    expect(result.freedBytes).toBeGreaterThanOrEqual(400_000)
    expect(before - (await objectBytesOnDisk(store.root))).toBeGreaterThanOrEqual(400_000)
    await expect(fs.stat(store.path('logs', 'refs', 'tags', 'old'))).rejects.toThrow(/ENOENT/)
    expect(await readReflog(store, 'refs/heads/main')).toEqual([]) // every entry was older than the cutoff

    expect((await verify({ store })).ok).toBe(true)
    const into = join(tempDir('gc'), 'out')
    await checkout({ dir, id: current.id, into })
    expect(await fs.readFile(join(into, 'a.txt'), 'utf8')).toBe('current')
  })

  it('takes now, never, ages and dates, and refuses anything else with a usage error', async () => {
    const { store, old } = await deletedTagStore()
    expect((await gc({ store, prune: 'never', now: later(10_000) })).removed).toEqual([])
    expect((await gc({ store, prune: '2.weeks.ago' })).removed).toEqual([])
    expect((await gc({ store, prune: '2999-01-01', dryRun: true })).removed).toContain(old.id)
    await expect(gc({ store, prune: 'soonish' })).rejects.toBeInstanceOf(UsageError)
    expect((await gc({ store, prune: 'now' })).removed).toContain(old.id)
  })

  it('deletes runs and reclaims their objects', async () => {
    const { store } = await storeWorkspace({ 'a.txt': 'a' })
    const runs = RunStore.open({ store })
    const digest = await runs.save(makeRun([['tool', 'fetch', { url: 'x' }, 'y'.repeat(200_000)]]))
    expect(runs.list()).toHaveLength(1)
    runs.close()

    expect(await removeRuns({ store, specs: ['latest'] })).toEqual(['run-0000000000000000000a'])
    const reopened = RunStore.open({ store })
    expect(reopened.list()).toEqual([])
    reopened.close()
    expect((await gc({ store })).removed).toEqual([]) // its reflog entry is fresh
    const result = await gc({ store, now: later(91) })
    expect(result.removed).toEqual([digest])
    expect(result.freedBytes).toBeGreaterThan(200_000)
  })

  it('forkpoint tag -d, runs rm and gc --prune=now give the space back', async () => {
    const { dir, store } = await deletedTagStore()
    const runs = RunStore.open({ store })
    const runObject = await runs.save(makeRun([['llm', 'plan', { q: 1 }, 'z'.repeat(100_000)]]))
    runs.close()
    const rm = await fp(dir, 'runs', 'rm', 'latest')
    expect(rm.code, rm.stderr).toBe(0)
    expect(rm.stdout).toContain('removed run-0000000000000000000a')
    expect((await fp(dir, 'gc', '--prune', 'soonish')).code).toBe(2)
    const kept = await fpJson<{ removed: number }>(dir, 'gc')
    expect(kept.json.removed).toBe(0)
    const gcNow = await fpJson<{ removed: number; removedIds: string[]; freedBytes: number; expiredReflogEntries: number }>(dir, 'gc', '--prune=now')
    expect(gcNow.code).toBe(0)
    expect(gcNow.json.removedIds).toContain(runObject)
    expect(gcNow.json.freedBytes).toBeGreaterThan(500_000)
    expect(gcNow.json.expiredReflogEntries).toBeGreaterThan(0)
  })
})
