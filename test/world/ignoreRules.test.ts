import { describe, expect, it } from 'vitest'
import { type Digest, Store, snapshotWorkspace } from '../../src/index.js'
import { readSnapshot, readTree } from '../../src/world/tree/readObjects.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** Every path (files, symlinks, empty dirs) in a snapshot's tree. */
async function snapshotPaths(store: Store, id: Digest): Promise<string[]> {
  const out: string[] = []
  const walk = async (tree: Digest, prefix: string): Promise<void> => {
    const t = await readTree(store, tree)
    if (t.entries.length === 0 && prefix) out.push(`${prefix}/`)
    for (const e of t.entries) {
      const path = prefix ? `${prefix}/${e.name}` : e.name
      if (e.type === 'dir') await walk(e.tree, path)
      else out.push(path)
    }
  }
  await walk((await readSnapshot(store, id)).world.tree, '')
  return out.sort()
}

describe('.forkpointignore', () => {
  it('applies gitignore syntax: globs, negation, directory-only patterns, anchored paths', async () => {
    const { dir, store } = await storeWorkspace({
      '.forkpointignore': ['*.log', '!important.log', 'build/', '/top-only.txt', 'cache', '# a comment', 'sub/exact.txt'].join('\n'),
      'a.log': 'x',
      'important.log': 'kept by negation',
      'build/out.js': 'x',
      'build-not-a-dir': 'file named like the dir pattern stays',
      'src/build': 'a file called build stays: build/ matches directories only',
      'top-only.txt': 'x',
      'src/top-only.txt': 'not at the root: kept',
      'cache/x': 'x',
      'src/cache': 'x',
      'sub/exact.txt': 'x',
      'sub/other.txt': 'kept',
      'src/deep/trace.log': 'x',
    })
    const snap = await snapshotWorkspace({ dir })
    expect(await snapshotPaths(store, snap.id)).toEqual([
      '.forkpointignore',
      'build-not-a-dir',
      'important.log',
      'src/build',
      'src/deep/', // a directory whose every file is ignored is still there: kept as an empty directory
      'src/top-only.txt',
      'sub/other.txt',
    ])
  })

  it('reads nested ignore files relative to their own directory, deeper files refining shallower ones', async () => {
    const { dir, store } = await storeWorkspace({
      '.forkpointignore': '*.tmp\n*.log\n',
      'pkg/.forkpointignore': '/local.txt\n!keep.log\n',
      'pkg/local.txt': 'ignored by pkg/.forkpointignore',
      'pkg/inner/local.txt': 'anchored to pkg/: kept',
      'pkg/keep.log': 'un-ignored by the deeper file',
      'pkg/drop.log': 'still ignored by the root file',
      'pkg/x.tmp': 'ignored by the root file',
      'local.txt': 'the pkg rule does not reach up here',
    })
    const snap = await snapshotWorkspace({ dir })
    expect(await snapshotPaths(store, snap.id)).toEqual(['.forkpointignore', 'local.txt', 'pkg/.forkpointignore', 'pkg/inner/local.txt', 'pkg/keep.log'])
  })

  it('applies .gitignore only with respectGitignore', async () => {
    const files = { '.gitignore': 'node_modules/\n*.o\n', 'node_modules/m/index.js': 'x', 'main.o': 'x', 'main.c': 'int main;' }
    const { dir, store } = await storeWorkspace(files)
    const plain = await snapshotWorkspace({ dir })
    expect(await snapshotPaths(store, plain.id)).toEqual(['.gitignore', 'main.c', 'main.o', 'node_modules/m/index.js'])
    const respecting = await snapshotWorkspace({ dir, respectGitignore: true })
    expect(await snapshotPaths(store, respecting.id)).toEqual(['.gitignore', 'main.c'])
  })

  it('always leaves the store directory out, even when a rule re-includes it or it has another name', async () => {
    const { dir, store } = await storeWorkspace({ '.forkpointignore': '!.forkpoint\n!.forkpoint/**\n', 'a.txt': 'a' })
    const snap = await snapshotWorkspace({ dir })
    expect(await snapshotPaths(store, snap.id)).toEqual(['.forkpointignore', 'a.txt'])

    const ws = await makeWorkspace({ 'b.txt': 'b' })
    const custom = await Store.init(`${ws}/my-store`)
    const snap2 = await snapshotWorkspace({ dir: ws, store: custom })
    expect(await snapshotPaths(custom, snap2.id)).toEqual(['b.txt'])
  })
})
