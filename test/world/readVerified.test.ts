import { promises as fs } from 'node:fs'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DigestMismatchError, checkout, snapshotWorkspace } from '../../src/index.js'
import { readRef } from '../../src/store/refs.js'
import { type CheckoutStep, writeJournal } from '../../src/world/checkout/checkoutJournal.js'
import { readSnapshot, readTree } from '../../src/world/tree/readObjects.js'
import { fp } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { dirState, listOrNull, storeWorkspace } from '../helpers/workspace.js'

/** A snapshot of a.txt / sub/b.txt whose blob for b.txt then changes on disk (same length). */
async function corruptedSnapshot() {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'alpha', 'sub/b.txt': 'bravo' })
  const snap = await snapshotWorkspace({ dir, store, message: 'one' })
  const top = await readTree(store, (await readSnapshot(store, snap.id)).world.tree)
  const sub = top.entries.find((e) => e.name === 'sub')!
  const b = (await readTree(store, sub.type === 'dir' ? sub.tree : (null as never))).entries[0]!
  const blob = b.type === 'file' && 'blob' in b ? b.blob : (null as never)
  await fs.chmod(store.objectPath(blob), 0o644)
  await fs.writeFile(store.objectPath(blob), 'BRAVO')
  return { dir, store, id: snap.id, blob }
}

describe('every read for use verifies the digest', () => {
  for (const method of ['copy', 'hardlink'] as const) {
    it(`checkout --into (${method}) refuses a changed object, naming it and the path, and leaves no target`, async () => {
      const { dir, id, blob } = await corruptedSnapshot()
      const target = join(tempDir('into'), 'out')
      const err = await checkout({ dir, id, into: target, method }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(DigestMismatchError)
      expect((err as DigestMismatchError).message).toContain(blob)
      expect((err as DigestMismatchError).data).toMatchObject({ digest: blob, path: 'sub/b.txt' })
      expect(await listOrNull(target)).toBeNull()
    })
  }

  it('the CLI: checkout --into and in place exit 5, the workspace as it was', async () => {
    const { dir, store, id, blob } = await corruptedSnapshot()
    const target = join(tempDir('into'), 'out')
    const into = await fp(dir, 'checkout', id, '--into', target)
    expect(into.code).toBe(5)
    expect(into.stderr).toContain(blob)
    expect(into.stderr).toContain('sub/b.txt')
    expect(await listOrNull(target)).toBeNull()

    await fs.rm(join(dir, 'sub'), { recursive: true })
    await fs.writeFile(join(dir, 'a.txt'), 'changed')
    const before = await dirState(dir)
    const inPlace = await fp(dir, 'checkout', id, '--force')
    expect(inPlace.code).toBe(5)
    expect(inPlace.stderr).toContain('sub/b.txt')
    expect(await dirState(dir)).toEqual(before)
    expect(await readRef(store, 'HEAD')).toBe(id)
  })
})

describe('an in-place checkout journal that cannot be replayed', () => {
  it('is set aside: status reports it once, then works; checkout --force restores the workspace', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'keep.txt': 'k' })
    const head = (await snapshotWorkspace({ dir, store, message: 'one' })).id
    const staging = store.tempPath('checkout')
    await fs.mkdir(staging)
    await fs.writeFile(join(staging, '1'), 'x') // staged for step 1
    // As an interrupted checkout leaves it: a.txt already removed, then a step that can never run.
    await fs.rm(join(dir, 'a.txt'))
    const steps: CheckoutStep[] = [
      { op: 'remove', path: 'a.txt' },
      { op: 'place', path: 'n'.repeat(300) },
    ]
    await writeJournal(store, { kind: 'checkout-journal', schemaVersion: 1, workspace: dir, staging: basename(staging), steps, head: 'ref: refs/heads/other\n' })

    const first = await fp(dir, 'status')
    expect(first.code).not.toBe(0)
    expect(first.stderr).toContain('set aside')
    const second = await fp(dir, 'status', '--json')
    expect(second.code).toBe(0)
    expect(JSON.parse(second.stdout)).toMatchObject({ head, changes: [{ path: 'a.txt', status: 'deleted' }] })
    expect(await listOrNull(staging)).toBeNull()
    expect((await fp(dir, 'checkout', 'HEAD', '--force')).code).toBe(0)
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('a')
    expect((await fp(dir, 'status')).stdout).toContain('clean')
  })

  it('checkout --force goes through at once', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    await snapshotWorkspace({ dir, store, message: 'one' })
    await fs.writeFile(store.path('checkout-journal.json'), '{"kind": "checkout-jour') // torn
    await fs.rm(join(dir, 'a.txt'))
    expect((await fp(dir, 'checkout', 'HEAD', '--force')).code).toBe(0)
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('a')
  })
})
