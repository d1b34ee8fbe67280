import { existsSync, promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PatternCallbackError, Workspace, reflexion } from '../../src/index.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { expectNoBranches } from './leftovers.js'

const open = async () => Workspace.open({ dir: await makeWorkspace({ 'calc.js': 'a - b\n' }) })

describe('reflexion', () => {
  it("feeds each failed attempt's critique into the next, in a fresh branch, and commits the first success", async () => {
    const ws = await open()
    const given: Array<string | undefined> = []
    const outcome = await reflexion(
      async (path, attempt, _signal, { feedback }) => {
        given.push(feedback)
        expect(readFileSync(join(path, 'calc.js'), 'utf8')).toBe('a - b\n') // a fresh branch, not the last attempt's
        await fs.writeFile(join(path, 'calc.js'), attempt < 2 ? `a * b // try ${attempt}\n` : 'a + b\n')
        return attempt === 2
      },
      { maxRetries: 5, critique: (result, path) => `try ${result.index} wrote ${readFileSync(join(path!, 'calc.js'), 'utf8').trim()}` },
    ).apply(ws)
    expect(given).toEqual([undefined, 'try 0 wrote a * b // try 0', 'try 1 wrote a * b // try 1'])
    expect(outcome.results.map((r) => [r.index, r.status, r.feedback])).toEqual([
      [0, 'failed', undefined],
      [1, 'failed', 'try 0 wrote a * b // try 0'],
      [2, 'succeeded', 'try 1 wrote a * b // try 1'],
    ])
    expect(outcome.winner).toBe(2)
    expect(readFileSync(join(ws.dir, 'calc.js'), 'utf8')).toBe('a + b\n')
    await expectNoBranches(ws)
  })

  it('gives up after maxRetries, critiquing throws and timeouts too, committing nothing', async () => {
    const ws = await open()
    const outcome = await reflexion(
      async (_path, attempt) => {
        if (attempt === 0) throw new Error('syntax error')
        if (attempt === 1) return new Promise<boolean>(() => undefined)
        return false
      },
      { maxRetries: 2, timeout: '5s' },
    ).apply(ws)
    expect(outcome.results.map((r) => r.status)).toEqual(['error', 'timeout', 'failed'])
    expect(outcome.results[1]!.feedback).toBe('attempt 0 error: syntax error')
    expect(outcome.results[2]!.feedback).toMatch(/^attempt 1 timeout: timed out after 5000 ms/)
    expect(outcome.committed).toBe(false)
    await expectNoBranches(ws)
  })

  it('gives a command candidate the critique of its failed run in FORKPOINT_FEEDBACK', async () => {
    const ws = await open()
    const outcome = await reflexion('if [ -n "$FORKPOINT_FEEDBACK" ]; then echo "$FORKPOINT_FEEDBACK" > feedback.txt; else echo "wrong sign" >&2; exit 1; fi', {
      maxRetries: 1,
    }).apply(ws)
    expect(outcome.winner).toBe(1)
    expect(readFileSync(join(ws.dir, 'feedback.txt'), 'utf8')).toBe('attempt 0 exited 1:\nwrong sign\n')
    await expectNoBranches(ws)
  })

  it('reports a throwing critique as a PatternCallbackError and leaves nothing behind', async () => {
    const ws = await open()
    const err = await reflexion(async () => false, {
      critique: () => {
        throw new Error('critic is down')
      },
    })
      .apply(ws)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PatternCallbackError)
    expect((err as Error).message).toMatch(/critique callback failed: critic is down/)
    expect(existsSync(join(ws.dir, 'feedback.txt'))).toBe(false)
    await expectNoBranches(ws)
  })
})
