import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PatternCallbackError, Workspace, tournament } from '../../src/index.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { expectNoBranches } from './leftovers.js'

const open = async () => Workspace.open({ dir: await makeWorkspace({ 'essay.txt': '' }) })
const essay = (path: string) => readFileSync(join(path, 'essay.txt'), 'utf8')
const lengths = [3, 9, 4, 9, 7]
const write = async (path: string, attempt: number) => {
  await fs.writeFile(join(path, 'essay.txt'), 'x'.repeat(lengths[attempt]!))
  return true
}

describe('tournament', () => {
  it('eliminates pairwise by the judge until one remains, with a bye for the odd one out', async () => {
    const ws = await open()
    const seen: string[] = []
    const outcome = await tournament(write, {
      n: 5,
      judge: (a, b) => {
        seen.push(`${essay(a).length}v${essay(b).length}`)
        return essay(a).length >= essay(b).length ? 0 : 1 // a tie keeps A
      },
    }).apply(ws)
    expect(outcome.matches).toEqual([
      { round: 1, a: 0, b: 1, winner: 1 },
      { round: 1, a: 2, b: 3, winner: 3 },
      { round: 2, a: 1, b: 3, winner: 1 },
      { round: 3, a: 1, b: 4, winner: 1 },
    ])
    expect(outcome.winner).toBe(1)
    expect(essay(ws.dir)).toHaveLength(9)
    await expectNoBranches(ws)
  })

  it('puts failed, throwing and timed-out candidates out before the first round', async () => {
    const ws = await open()
    const outcome = await tournament(
      async (path: string, attempt: number) => {
        if (attempt === 1) throw new Error('crash')
        if (attempt === 2) return new Promise<boolean>(() => undefined)
        if (attempt === 3) return false
        return write(path, attempt)
      },
      { n: 5, timeout: '5s', judge: (a, b) => (essay(a).length >= essay(b).length ? 0 : 1) },
    ).apply(ws)
    expect(outcome.results.map((r) => r.status)).toEqual(['succeeded', 'error', 'timeout', 'failed', 'succeeded'])
    expect(outcome.matches).toEqual([{ round: 1, a: 0, b: 4, winner: 4 }])
    expect(essay(ws.dir)).toHaveLength(7)
    await expectNoBranches(ws)
  })

  it('commits the lone success without a match, and nothing when all fail', async () => {
    const ws = await open()
    const judge = () => 0 as const
    const one = await tournament(async (p: string, i: number) => (i === 2 ? write(p, i) : false), { n: 3, judge }).apply(ws)
    expect([one.winner, one.matches]).toEqual([2, []])
    const none = await tournament(async () => false, { n: 3, judge }).apply(ws)
    expect(none.committed).toBe(false)
    await expectNoBranches(ws)
  })

  it('rejects a judge that answers something else than 0 or 1, leaving nothing behind', async () => {
    const ws = await open()
    const err = await tournament(write, { n: 2, judge: () => 2 as unknown as 0 })
      .apply(ws)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PatternCallbackError)
    expect(essay(ws.dir)).toBe('')
    await expectNoBranches(ws)
  })
})
