import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Candidate, PatternCallbackError, Workspace, beamSearch, treeOfThoughts } from '../../src/index.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { expectNoBranches } from './leftovers.js'

const open = async () => Workspace.open({ dir: await makeWorkspace({ 'path.txt': '', 'keep.txt': 'kept' }) })
const pathOf = (dir: string) => readFileSync(join(dir, 'path.txt'), 'utf8').trim()
/** A thought: appends its name to path.txt, so each node's file spells the path from the root. */
const step =
  (name: string, ok = true): Candidate =>
  async (path) => {
    const before = pathOf(path)
    await fs.writeFile(join(path, 'path.txt'), before ? `${before}>${name}\n` : `${name}\n`)
    return ok
  }
const scoresBy = (table: Record<string, number>) => (path: string) => table[pathOf(path)] ?? 0
const expandWith =
  (children: Record<string, string[]>, expanded: string[] = []) =>
  ({ path }: { path: string }) => {
    expanded.push(pathOf(path))
    return (children[pathOf(path)] ?? []).map((n) => step(n))
  }

describe('treeOfThoughts', () => {
  it('expands the best branch level by level in nested branches and commits the path through its ancestors', async () => {
    const ws = await open()
    const expanded: string[] = []
    const outcome = await treeOfThoughts([step('A'), step('B'), step('C')], {
      expand: expandWith({ B: ['x', 'y'], 'B>x': ['p', 'q'], A: ['never'] }, expanded),
      evaluate: scoresBy({ A: 1, B: 3, C: 2, 'B>x': 5, 'B>y': 4, 'B>x>p': 4, 'B>x>q': 6 }),
      maxDepth: 3,
    }).apply(ws)
    expect(expanded).toEqual(['B', 'B>x'])
    expect(outcome.results.map((r) => [r.index, r.depth, r.parent ?? null, r.score])).toEqual([
      [0, 1, null, 1],
      [1, 1, null, 3],
      [2, 1, null, 2],
      [3, 2, 1, 5],
      [4, 2, 1, 4],
      [5, 3, 3, 4],
      [6, 3, 3, 6],
    ])
    expect(outcome.winner).toBe(6)
    expect(pathOf(ws.dir)).toBe('B>x>q')
    expect(readFileSync(join(ws.dir, 'keep.txt'), 'utf8')).toBe('kept')
    await expectNoBranches(ws)
  })

  it('keeps the best node seen when deeper ones score lower; a tie goes to the deeper', async () => {
    const ws = await open()
    const lower = await treeOfThoughts([step('A')], { expand: expandWith({ A: ['x'], 'A>x': ['y'] }), evaluate: scoresBy({ A: 2, 'A>x': 5, 'A>x>y': 1 }), maxDepth: 3 }).apply(ws)
    expect(lower.winner).toBe(1)
    expect(pathOf(ws.dir)).toBe('A>x')
    await fs.writeFile(join(ws.dir, 'path.txt'), '')
    const tie = await treeOfThoughts([step('A')], { expand: expandWith({ A: ['x'] }), evaluate: scoresBy({ A: 2, 'A>x': 2 }), maxDepth: 2 }).apply(ws)
    expect(tie.winner).toBe(1)
    expect(pathOf(ws.dir)).toBe('A>x')
    await expectNoBranches(ws)
  })

  it('stops at maxDepth, when expand returns nothing, or when every child fails (committing the parent)', async () => {
    const ws = await open()
    const failing = await treeOfThoughts([step('A')], {
      expand: () => [
        step('bad', false),
        async () => {
          throw new Error('no')
        },
      ],
      maxDepth: 5,
    }).apply(ws)
    expect(failing.results.map((r) => r.status)).toEqual(['succeeded', 'failed', 'error'])
    expect(pathOf(ws.dir)).toBe('A')
    await fs.writeFile(join(ws.dir, 'path.txt'), '')
    const shallow = await treeOfThoughts([step('A')], { expand: expandWith({ A: ['x'] }), maxDepth: 1 }).apply(ws)
    expect(shallow.results).toHaveLength(1)
    await expectNoBranches(ws)
  })

  it('commits nothing when every strategy fails, and reports a throwing expand', async () => {
    const ws = await open()
    const none = await treeOfThoughts([step('A', false), async () => new Promise<boolean>(() => undefined)], { expand: () => [], timeout: '5s' }).apply(ws)
    expect(none.results.map((r) => r.status)).toEqual(['failed', 'timeout'])
    expect(none.committed).toBe(false)
    const err = await treeOfThoughts([step('A')], {
      expand: () => {
        throw new Error('planner crashed')
      },
    })
      .apply(ws)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PatternCallbackError)
    expect(pathOf(ws.dir)).toBe('')
    await expectNoBranches(ws)
  })

  it('runs sandboxed command thoughts in nested branches', async () => {
    const ws = await open()
    const outcome = await treeOfThoughts(['echo A > path.txt', 'exit 1'], {
      expand: ({ depth }) => [`printf 'A>%s\\n' "d${depth}" > path.txt; echo nested >> keep.txt`],
      maxDepth: 2,
    }).apply(ws)
    expect(outcome.results.map((r) => r.status)).toEqual(['succeeded', 'failed', 'succeeded'])
    expect(outcome.winner).toBe(2)
    expect(pathOf(ws.dir)).toBe('A>d1')
    expect(readFileSync(join(ws.dir, 'keep.txt'), 'utf8')).toBe('keptnested\n')
    await expectNoBranches(ws)
  })
})

describe('beamSearch', () => {
  it('keeps the global top-K across all beams at each depth', async () => {
    const ws = await open()
    const expanded: string[] = []
    const outcome = await beamSearch([step('A'), step('B'), step('C')], {
      beamWidth: 2,
      maxDepth: 3,
      expand: expandWith({ B: ['x', 'y'], C: ['x', 'y'], 'C>x': ['p', 'q'], 'B>x': ['p', 'q'], A: ['never'], 'B>y': ['never'] }, expanded),
      evaluate: scoresBy({ A: 1, B: 3, C: 2, 'B>x': 5, 'B>y': 2, 'C>x': 6, 'C>y': 1, 'C>x>p': 4, 'C>x>q': 3, 'B>x>p': 7, 'B>x>q': 1 }),
    }).apply(ws)
    expect(expanded).toEqual(['B', 'C', 'C>x', 'B>x']) // the depth-2 beam is C>x and B>x, from two different parents
    expect(outcome.results).toHaveLength(3 + 4 + 4)
    expect(outcome.results[outcome.winner!]!.depth).toBe(3)
    expect(pathOf(ws.dir)).toBe('B>x>p')
    await expectNoBranches(ws)
  })

  it('ranks ties by index and stops with the previous beam when a whole level fails', async () => {
    const ws = await open()
    const expanded: string[] = []
    const outcome = await beamSearch([step('A'), step('B'), step('C')], {
      beamWidth: 2,
      maxDepth: 4,
      expand: ({ path }) => {
        expanded.push(pathOf(path))
        return [step('dead', false)]
      },
      evaluate: () => 1,
    }).apply(ws)
    expect(expanded).toEqual(['A', 'B'])
    expect(outcome.winner).toBe(0)
    expect(pathOf(ws.dir)).toBe('A')
    await expectNoBranches(ws)
  })

  it('refuses a beam width below 1 or a missing expand', () => {
    expect(() => beamSearch([step('A')], { beamWidth: 0, expand: () => [] })).toThrow(/beamWidth/)
    expect(() => beamSearch([step('A')], {} as never)).toThrow(/expand/)
  })
})
