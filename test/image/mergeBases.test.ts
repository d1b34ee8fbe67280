import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { type Digest, Store } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { makeTree } from '../../src/objects/Tree.js'
import { mergeBases } from '../../src/image/mergeBases.js'
import { tempDir } from '../helpers/tmp.js'

/** A history from a list of `name: parents`, as snapshots in a fresh store and as commits in a git repository. */
async function history(spec: Record<string, string[]>): Promise<{ store: Store; ids: Record<string, Digest>; git: (a: string, b: string) => string[] }> {
  const store = await Store.init(tempDir('bases'))
  const tree = await store.writeObject({ ...makeTree([]) })
  const ids: Record<string, Digest> = {}
  const repo = tempDir('bases-git')
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, ...args], { env: { ...process.env, GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z' } })
      .toString()
      .trim()
  git('init', '-q')
  const emptyTree = git('mktree')
  const commits: Record<string, string> = {}
  for (const [name, parents] of Object.entries(spec)) {
    ids[name] = await store.writeObject(makeSnapshot({ parents: parents.map((p) => ids[p]!), tree, message: name, createdAt: new Date(0) }))
    commits[name] = git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', emptyTree, '-m', name, ...parents.flatMap((p) => ['-p', commits[p]!]))
  }
  const byCommit = new Map(Object.entries(commits).map(([name, c]) => [c, name]))
  const gitBases = (a: string, b: string) => {
    try {
      return git('merge-base', '--all', commits[a]!, commits[b]!)
        .split('\n')
        .map((c) => byCommit.get(c)!)
        .sort()
    } catch {
      return [] // unrelated: git exits 1
    }
  }
  return { store, ids, git: gitBases }
}

const names = (ids: Record<string, Digest>, found: Digest[]) => found.map((d) => Object.keys(ids).find((k) => ids[k] === d)).sort()

describe('mergeBases', () => {
  it('finds what git merge-base --all finds: a plain fork, a descendant, criss-cross merges, unrelated histories', async () => {
    const { store, ids, git } = await history({
      root: [],
      a1: ['root'],
      b1: ['root'],
      a2: ['a1', 'b1'], // criss-cross: each side merges the other's first commit
      b2: ['b1', 'a1'],
      a3: ['a2'],
      b3: ['b2'],
      lone: [],
      lone2: ['lone'],
    })
    const pairs: Array<[string, string]> = [
      ['a1', 'b1'],
      ['a1', 'a3'],
      ['a3', 'b3'],
      ['a2', 'b2'],
      ['root', 'root'],
      ['a3', 'lone2'],
    ]
    for (const [a, b] of pairs) {
      const ours = names(ids, await mergeBases({ store, a: ids[a]!, b: ids[b]! }))
      expect({ pair: [a, b], bases: ours }).toEqual({ pair: [a, b], bases: git(a, b) })
    }
    expect(names(ids, await mergeBases({ store, a: ids.a3!, b: ids.b3! }))).toEqual(['a1', 'b1'])
    expect(await mergeBases({ store, a: ids.a3!, b: ids.lone2! })).toEqual([])
  })

  it('walks a long history once, not once per ancestor', async () => {
    const store = await Store.init(tempDir('bases'))
    const tree = await store.writeObject({ ...makeTree([]) })
    const snapshot = (parents: Digest[], message: string) => store.writeObject(makeSnapshot({ parents, tree, message, createdAt: new Date(0) }))
    const ids: Record<string, Digest> = { c0: await snapshot([], 'c0') }
    for (let i = 1; i < 3000; i++) ids[`c${i}`] = await snapshot([ids[`c${i - 1}`]!], `c${i}`)
    ids.side = await snapshot([ids.c2999!], 'side')
    ids.other = await snapshot([ids.c2999!], 'other')
    let reads = 0
    const counting = new Proxy(store, {
      get: (target, key, receiver) => (key === 'readObject' ? (reads++, Reflect.get(target, key, receiver)) : Reflect.get(target, key, receiver)),
    })
    expect(names(ids, await mergeBases({ store: counting, a: ids.side, b: ids.other }))).toEqual(['c2999'])
    expect(reads).toBeLessThan(2 * 3002)
  })
})
