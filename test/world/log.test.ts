import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createTag, forkImage, log, snapshotWorkspace } from '../../src/index.js'
import type { Digest } from '../../src/objects/digest.js'
import { updateRef } from '../../src/store/refs.js'
import type { Store } from '../../src/store/Store.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { fp, fpJson } from '../helpers/cli.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** A snapshot of `base`'s files with no parents, named by `ref`: an image no head reaches. */
async function loneImage(store: Store, base: Digest, ref: string, message: string): Promise<Digest> {
  const snap = await readSnapshot(store, base)
  const id = await store.writeObject({ ...snap, parents: [], meta: { ...snap.meta, message } })
  await updateRef({ store, name: ref, id, message })
  return id
}

describe('log --all', () => {
  it("starts from every ref that names a snapshot, whatever its namespace, and labels each; runs, ledgers, machine images, a machine's start and a merge draft stay out", async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'one\n' })
    const first = await snapshotWorkspace({ dir, message: 'first' })
    await createTag({ dir, name: 'v1' })
    await fs.writeFile(join(dir, 'a.txt'), 'two\n')
    const second = await snapshotWorkspace({ dir, message: 'second' })
    const [child] = await forkImage({ dir, id: first.id, n: 1 })
    const shown = {
      claude: await loneImage(store, first.id, 'refs/claude/session-1', 'claude session'),
      thread: await loneImage(store, first.id, 'refs/threads/thread-1', 'langgraph thread'),
      byHand: await loneImage(store, first.id, 'refs/custom/mine', 'made by hand'),
    }
    const hidden = [await loneImage(store, first.id, 'refs/merge/draft', 'merge draft'), await loneImage(store, first.id, 'refs/machines/m0000001', 'machine start')]
    const notImage = await store.writeObject({ kind: 'machine-image', schemaVersion: 1 })
    for (const name of ['refs/machine-images/busybox', 'refs/machines/m0000002', 'refs/runs/run-1', 'refs/effects/workspace']) {
      await updateRef({ store, name, id: notImage, message: 'not a snapshot' })
    }
    await updateRef({ store, name: 'refs/custom/blob', id: await store.writeBlob(Buffer.from('a blob')), message: 'not a snapshot' })

    const entries = await log({ dir, all: true })
    const labels = new Map(entries.map((e) => [e.id, e.refs]))
    expect(new Set(labels.keys())).toEqual(new Set([first.id, second.id, child!.id, ...Object.values(shown)]))
    for (const id of hidden) expect(labels.has(id)).toBe(false)
    expect(labels.get(second.id)).toEqual(['HEAD', 'main'])
    expect(labels.get(first.id)).toEqual(['tag: v1'])
    expect(labels.get(child!.id)).toEqual([child!.ref])
    expect(labels.get(shown.claude)).toEqual(['refs/claude/session-1'])
    expect(labels.get(shown.byHand)).toEqual(['refs/custom/mine'])

    // from the CLI too, and a label names what an id argument takes
    const cli = await fpJson<{ entries: Array<{ id: string; refs: string[] }> }>(dir, 'log', '--all')
    expect(cli.json.entries.map((e) => e.id).sort()).toEqual(entries.map((e) => e.id).sort())
    expect((await fpJson<{ entries: Array<{ id: string }> }>(dir, 'log', child!.ref)).json.entries[0]!.id).toBe(child!.id)
    // the graph draws each of them, the lone images apart from the rest (a blank row between)
    const graph = (await fp(dir, 'log', '--all', '--graph')).stdout.trimEnd().split('\n')
    expect(graph.filter((l) => l.startsWith('*') || l.includes(' * ')).length).toBe(entries.length)
    expect(graph.filter((l) => l.trim() === '').length).toBe(Object.keys(shown).length)
  })
})
