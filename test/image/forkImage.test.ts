import { describe, expect, it } from 'vitest'
import { gc, initWorkspace, openStore, snapshotWorkspace } from '../../src/index.js'
import { listRefs } from '../../src/store/refs.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { forkImage } from '../../src/image/forkImage.js'
import { mergeBases } from '../../src/image/mergeBases.js'
import { initCommand } from '../../src/cli/commands/init.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { runCli } from '../helpers/cli.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { callOperation } from '../helpers/callOperation.js'

describe('forkImage', () => {
  it('makes N children of an image, each its own id with the image as parent and the same layers, kept by refs/forks', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'hi\n' })
    await initWorkspace({ dir })
    const { store } = await openStore({ dir })
    const base = await snapshotWorkspace({ dir, message: 'base' })
    const children = await forkImage({ store, id: 'HEAD', n: 4, now: () => new Date('2026-01-01T00:00:00Z') })
    expect(children.map((c) => c.index)).toEqual([0, 1, 2, 3])
    expect(new Set(children.map((c) => c.id)).size).toBe(4)
    const prefix = `refs/forks/${base.id.slice('sha256:'.length, 'sha256:'.length + 12)}`
    expect(await listRefs(store, `${prefix}/`)).toEqual(expect.arrayContaining(children.map((c) => ({ name: c.ref, id: c.id }))))
    for (const child of children) {
      const snapshot = await readSnapshot(store, child.id)
      expect(snapshot.parents).toEqual([base.id])
      expect(snapshot.world.tree).toBe(base.tree)
      expect(snapshot.meta.fork).toEqual({ of: base.id, index: child.index })
    }
    expect(await mergeBases({ store, a: children[0]!.id, b: children[3]!.id })).toEqual([base.id])
    // a second fork numbers on; gc keeps every child
    expect((await forkImage({ store, id: base.id, n: 2 })).map((c) => c.index)).toEqual([4, 5])
    await gc({ store })
    for (const child of children) expect((await readSnapshot(store, child.id)).parents).toEqual([base.id])
  })

  it('refuses a count that is not a whole number from 1 up, with exit 2, and names an unknown image', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'hi\n' })
    await initCommand({ dir })
    await snapshotAgent({ dir })
    for (const n of ['0', '-3', '1.5', 'many'])
      await expect(callOperation('fork', { dir, id: 'HEAD', count: Number(n) }), n).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
    await expect(callOperation('fork', { dir, id: 'deadbeef', count: 2 })).rejects.toThrow(/deadbeef/)
    const r = await runCli(['fork', 'HEAD', '-n', 'many'], { cwd: dir })
    expect({ code: r.code, lines: r.stderr.trim().split('\n').length }).toEqual({ code: 2, lines: 1 })
  })

  it('prints one child id per line from the CLI, and the children with --json', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'hi\n' })
    await runCli(['init'], { cwd: dir })
    await runCli(['snapshot'], { cwd: dir })
    const plain = await runCli(['fork', 'HEAD', '-n', '3'], { cwd: dir })
    expect(plain.code).toBe(0)
    const ids = plain.stdout.trim().split('\n')
    expect(ids).toHaveLength(3)
    for (const id of ids) expect(id).toMatch(/^sha256:[0-9a-f]{64}$/)
    const json = await runCli(['fork', 'HEAD', '-n', '1', '--json'], { cwd: dir })
    expect(JSON.parse(json.stdout).children).toEqual([expect.objectContaining({ index: 3, ref: expect.stringMatching(/^refs\/forks\/[0-9a-f]{12}\/3$/) })])
  })

  it('refuses (exit 5) to fork an image whose effects layer is not a ledger, making no child', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'hi\n' })
    await initWorkspace({ dir })
    const { store } = await openStore({ dir })
    const base = await snapshotWorkspace({ dir, message: 'base' })
    const hostile = await store.writeObject({ ...(await readSnapshot(store, base.id)), effects: base.tree })
    await expect(forkImage({ store, id: hostile, n: 2 })).rejects.toMatchObject({ code: 'MalformedObjectError', exitCode: 5 })
    const cli = await runCli(['fork', hostile, '-n', '2'], { cwd: dir })
    expect({ code: cli.code, stdout: cli.stdout, lines: cli.stderr.trim().split('\n').length }).toEqual({ code: 5, stdout: '', lines: 1 })
    expect(await listRefs(store, 'refs/forks/')).toEqual([])
  })
})
