import { existsSync, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { diffSnapshots, forkImage, snapshotForkBranch, snapshotWorkspace } from '../../src/index.js'
import { abortNamedBranch } from '../../src/branch/lifecycle/abortNamedBranch.js'
import { listBranches } from '../../src/branch/lifecycle/listBranches.js'
import { readRef } from '../../src/store/refs.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { merge } from '../../src/image/merge.js'
import { fpInProcess as fp, fpJsonInProcess as fpJson } from '../helpers/cli.js'
import { dirState, storeWorkspace } from '../helpers/workspace.js'

describe('fork --materialize', () => {
  it("gives each child a branch with the image's files (not the workspace's), which snapshots, diffs and merges as the child's image", async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'one\n', 'src/b.txt': 'b1\nb2\nb3\n' })
    const image = await snapshotWorkspace({ dir, message: 'image' })
    const imageFiles = await dirState(dir)
    // the workspace moves on after the image: the branches must still hold the image's world
    await fs.writeFile(join(dir, 'a.txt'), 'one, changed at HEAD\n')
    await fs.writeFile(join(dir, 'c.txt'), 'added at HEAD\n')
    await snapshotWorkspace({ dir, message: 'head' })

    const children = await forkImage({ store, dir, id: image.id, n: 3, materialize: true })
    expect(children.map((c) => c.branch?.name)).toEqual([0, 1, 2].map((i) => `fork-${image.id.slice(7, 19)}-${i}`))
    expect((await listBranches({ dir, store })).map((b) => b.name).sort()).toEqual(children.map((c) => c.branch!.name).sort())
    for (const child of children) {
      expect(await dirState(child.branch!.path)).toEqual(imageFiles)
    }

    // work in child 0's branch only; its siblings do not see it
    const [first, second] = children as [(typeof children)[0], (typeof children)[0]]
    await fs.writeFile(join(first.branch!.path, 'src/b.txt'), 'b1\nb2 from the fork\nb3\n')
    await fs.writeFile(join(first.branch!.path, 'new.txt'), 'made in the fork\n')
    expect(existsSync(join(second.branch!.path, 'new.txt'))).toBe(false)

    const snap = await snapshotForkBranch({ dir, store, branch: first.branch!.name, message: 'fork work' })
    expect(snap).toMatchObject({ ref: first.ref, parents: [first.id], created: true })
    expect(await readRef(store, first.ref)).toBe(snap.id)
    expect((await readSnapshot(store, snap.id)).meta.message).toBe('fork work')
    const diff = await diffSnapshots({ dir, store, a: first.id, b: snap.id })
    expect(diff.changes.map((c) => [c.path, c.status])).toEqual([
      ['new.txt', 'added'],
      ['src/b.txt', 'modified'],
    ])
    // nothing changed since: no new image
    expect(await snapshotForkBranch({ dir, store, branch: first.branch!.name })).toMatchObject({ id: snap.id, created: false })

    // merge the child back into HEAD: HEAD's own changes stay, the fork's come in
    const merged = await merge({ dir, store, from: first.ref })
    expect(merged.inProgress).toBe(false)
    expect(await fs.readFile(join(dir, 'src/b.txt'), 'utf8')).toBe('b1\nb2 from the fork\nb3\n')
    expect(await fs.readFile(join(dir, 'new.txt'), 'utf8')).toBe('made in the fork\n')
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('one, changed at HEAD\n')
    expect(await fs.readFile(join(dir, 'c.txt'), 'utf8')).toBe('added at HEAD\n')

    for (const child of children) await abortNamedBranch({ dir, store, name: child.branch!.name })
    expect(await listBranches({ dir, store })).toEqual([])
  })

  it('records a deletion and a new directory in the branch, and refuses a branch that is not a fork child', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'one\n', 'gone/x.txt': 'x\n' })
    const image = await snapshotWorkspace({ dir, message: 'image' })
    const [child] = await forkImage({ store, dir, id: image.id, n: 1, materialize: true })
    await fs.rm(join(child!.branch!.path, 'gone'), { recursive: true })
    await fs.mkdir(join(child!.branch!.path, 'deep/er'), { recursive: true })
    await fs.writeFile(join(child!.branch!.path, 'deep/er/y.txt'), 'y\n')
    const snap = await snapshotForkBranch({ dir, store, branch: child!.branch!.name })
    const diff = await diffSnapshots({ dir, store, a: child!.id, b: snap.id })
    expect(diff.changes.filter((c) => c.new?.type !== 'dir' && c.old?.type !== 'dir').map((c) => [c.path, c.status])).toEqual([
      ['deep/er/y.txt', 'added'],
      ['gone/x.txt', 'deleted'],
    ])
    await expect(snapshotForkBranch({ dir, store, branch: 'attempt' })).rejects.toMatchObject({ code: 'UsageError' })
    await abortNamedBranch({ dir, store, name: child!.branch!.name })
  })

  it('prints id<TAB>branch<TAB>path per child from the CLI; snapshot --branch moves the child, merge brings it in', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'one\n' })
    expect((await fp(dir, 'snapshot', '-m', 'image')).code).toBe(0)
    const forked = await fp(dir, 'fork', 'HEAD', '-n', '2', '--materialize')
    expect(forked.code).toBe(0)
    const lines = forked.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'))
    expect(lines.map((l) => l.length)).toEqual([3, 3])
    for (const [id, branch, path] of lines) {
      expect(id).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(await fs.readFile(join(path!, 'a.txt'), 'utf8')).toBe('one\n')
      await fs.writeFile(join(path!, 'b.txt'), `from ${branch}\n`)
      expect((await fp(dir, 'snapshot', '--branch', branch!, '-m', 'by the printed name')).code).toBe(0)
    }
    const list = await fpJson<{ children: Array<{ id: string; ref: string; branch: { name: string; path: string } }> }>(dir, 'fork', 'HEAD', '-n', '1', '--materialize', '--json')
    const child = list.json.children[0]!
    expect(child.branch.name).toMatch(/^fork-[0-9a-f]{12}-2$/)
    await fs.writeFile(join(child.branch.path, 'a.txt'), 'one\ntwo\n')
    const snap = await fp(dir, 'snapshot', '--branch', child.branch.name, '-m', 'in the fork')
    expect(snap.code).toBe(0)
    const newId = snap.stdout.trim()
    expect((await fp(dir, 'diff', child.id, newId)).stdout).toMatch(/a\.txt/)
    expect((await fp(dir, 'merge', child.ref)).code).toBe(0)
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\ntwo\n')
    const refused = await fp(dir, 'snapshot', '--branch', child.branch.name, '--env')
    expect({ code: refused.code, lines: refused.stderr.trim().split('\n').length }).toEqual({ code: 2, lines: 1 })
    const notFork = await fp(dir, 'snapshot', '--branch', 'fork-nothing')
    expect(notFork.code).toBe(2)
    for (const name of (await listBranches({ dir })).map((b) => b.name)) expect((await fp(dir, 'abort', name)).code).toBe(0)
  })
})
