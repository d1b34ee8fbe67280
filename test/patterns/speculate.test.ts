import { spawn } from 'node:child_process'
import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PatternCancelledError, UsageError, Workspace, speculate } from '../../src/index.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { eventually, expectNoBranches, processesWith } from './leftovers.js'

const open = async () => Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'base\n', 'src/x.ts': 'x' }) })
const write = (name: string, text: string) => async (path: string) => {
  await fs.writeFile(join(path, name), text)
  return true
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('speculate', () => {
  it('commits the first success and cancels the others at once', async () => {
    const ws = await open()
    const seen: AbortSignal[] = []
    const slow = async (path: string, _i: number, signal: AbortSignal) => {
      seen.push(signal)
      await fs.writeFile(join(path, 'a.txt'), 'slow\n')
      await new Promise((r) => signal.addEventListener('abort', r))
      return true
    }
    const fast = async (path: string) => {
      await sleep(50)
      await fs.writeFile(join(path, 'a.txt'), 'fast\n')
      return true
    }
    const outcome = await speculate([slow, fast, slow], { maxParallel: 3 }).apply(ws)
    expect(outcome.committed).toBe(true)
    expect(outcome.winner).toBe(1)
    expect(outcome.results.map((r) => r.status)).toEqual(['cancelled', 'succeeded', 'cancelled'])
    expect(outcome.results.map((r) => r.index)).toEqual([0, 1, 2])
    expect(seen.every((s) => s.aborted)).toBe(true)
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('fast\n')
    expect(outcome.commit?.written).toEqual(['a.txt'])
    await expectNoBranches(ws)
  })

  it('kills a losing sandboxed command: its processes are gone when speculate returns', async () => {
    const ws = await open()
    const marker = `31.${process.pid}7`
    const winner = async (path: string) => {
      expect(await eventually(() => processesWith(marker).length > 0, 30_000)).toBe(true) // the loser really runs
      await fs.writeFile(join(path, 'won.txt'), 'yes')
      return true
    }
    const outcome = await speculate([`echo started > a.txt; sleep ${marker}`, winner], { maxParallel: 2 }).apply(ws)
    expect(outcome.winner).toBe(1)
    expect(processesWith(marker)).toEqual([])
    expect(outcome.results[0]).toMatchObject({ status: 'cancelled', success: false, score: null })
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('base\n')
    await expectNoBranches(ws)
  })

  it('leaves no process when the cancel lands while the sandbox is still starting', async () => {
    const ws = await open()
    const marker = `29.${process.pid}9`
    for (let round = 0; round < 6; round++) {
      const outcome = await speculate([`sleep ${marker}`, async () => true], { maxParallel: 2 }).apply(ws)
      expect(outcome.winner).toBe(1)
      expect(processesWith(marker)).toEqual([])
    }
    await expectNoBranches(ws)
  })

  it("cancels a losing in-process candidate's child process through its signal", async () => {
    const ws = await open()
    let pid = 0
    const loser = async (_path: string, _i: number, signal: AbortSignal) => {
      const child = spawn('sleep', ['30'], { signal, stdio: 'ignore' })
      child.on('error', () => undefined)
      pid = child.pid!
      await new Promise((r) => child.on('exit', r))
      return true
    }
    const winner = async () => {
      expect(await eventually(() => pid !== 0, 30_000)).toBe(true)
      return true
    }
    const outcome = await speculate([loser, winner]).apply(ws)
    expect(outcome.winner).toBe(1)
    expect(isRunning(pid)).toBe(false)
    await expectNoBranches(ws)
  })

  it('with firstWins: false, runs all and commits the best score; a tie goes to the lower index', async () => {
    const ws = await open()
    const scored = (score: number, text: string) => async (path: string) => {
      await fs.writeFile(join(path, 'a.txt'), text)
      return { success: true, score }
    }
    const outcome = await speculate(
      [scored(1, 'one'), scored(5, 'five'), scored(5, 'five again'), scored(9, 'failed'), scored(2, 'two')].map((c, i) =>
        i === 3 ? async () => ({ success: false, score: 9 }) : c,
      ),
      { firstWins: false },
    ).apply(ws)
    expect(outcome.winner).toBe(1)
    expect(outcome.results.map((r) => r.score)).toEqual([1, 5, 5, 9, 2])
    expect(outcome.results[3]!.status).toBe('failed')
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('five')
    await expectNoBranches(ws)
  })

  it('commits nothing when every candidate fails, throws or times out', async () => {
    const ws = await open()
    const outcome = await speculate(
      [
        async () => false,
        async () => {
          throw new Error('boom')
        },
        () => {
          throw new Error('sync boom')
        },
        () => new Promise<boolean>(() => undefined), // never resolves
        'exit 3',
        async () => ({ success: true, score: Number.NaN }),
        async () => 'yes' as unknown as boolean,
      ],
      // long enough for 'exit 3' to fail, not time out, on a busy machine
      { timeout: '10s', maxParallel: 4 },
    ).apply(ws)
    expect(outcome.committed).toBe(false)
    expect(outcome.winner).toBeUndefined()
    expect(outcome.results.map((r) => r.status)).toEqual(['failed', 'error', 'error', 'timeout', 'failed', 'error', 'error'])
    expect(outcome.results[1]!.error).toBe('boom')
    expect(outcome.results[2]!.error).toBe('sync boom')
    expect(outcome.results[3]!.error).toMatch(/timed out after 10000 ms/)
    expect(outcome.results[5]!.error).toMatch(/finite number/)
    expect(outcome.results[6]!.error).toMatch(/must return true, false/)
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('base\n')
    await expectNoBranches(ws)
  })

  it('abandons a candidate that never resolves once another wins, without a timeout', async () => {
    const ws = await open()
    const outcome = await speculate([() => new Promise<boolean>(() => undefined), write('a.txt', 'winner\n')]).apply(ws)
    expect(outcome.results.map((r) => r.status)).toEqual(['cancelled', 'succeeded'])
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('winner\n')
    await expectNoBranches(ws)
  })

  it('never commits a candidate that succeeds after its deadline', async () => {
    const ws = await open()
    let lateDone = false
    const late = async (path: string) => {
      await sleep(400)
      await fs.writeFile(join(path, 'a.txt'), 'late').catch(() => undefined)
      lateDone = true
      return true
    }
    const outcome = await speculate([late], { timeout: 100 }).apply(ws)
    expect(outcome.results[0]!.status).toBe('timeout')
    expect(outcome.committed).toBe(false)
    await eventually(() => lateDone, 30_000)
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('base\n')
    await expectNoBranches(ws)
  })

  it('kills a sandboxed command that outlives its timeout', async () => {
    const ws = await open()
    const marker = `47.${process.pid}3`
    const outcome = await speculate([`trap '' TERM; sleep ${marker}`], { timeout: '300ms' }).apply(ws)
    expect(outcome.results[0]).toMatchObject({ status: 'timeout', success: false })
    expect(processesWith(marker)).toEqual([])
    await expectNoBranches(ws)
  })

  it('bounds concurrency by maxParallel and leaves queued candidates unstarted once one wins', async () => {
    const ws = await open()
    let running = 0
    let peak = 0
    const work = (ms: number, ok: boolean) => async () => {
      peak = Math.max(peak, ++running)
      await sleep(ms)
      running--
      return ok
    }
    const outcome = await speculate([work(100, false), work(100, false), work(30, true), work(60_000, true), work(50, true), work(50, true)], { maxParallel: 2 }).apply(ws)
    expect(peak).toBe(2)
    expect(outcome.winner).toBe(2)
    expect(outcome.results.slice(4).map((r) => [r.status, r.branch])).toEqual([
      ['cancelled', null],
      ['cancelled', null],
    ])
    await expectNoBranches(ws)
  })

  it('is cancelled by its signal: every candidate stops, nothing is committed or left', async () => {
    const ws = await open()
    const controller = new AbortController()
    const marker = `53.${process.pid}1`
    setTimeout(() => controller.abort(), 300)
    const run = speculate([
      `sleep ${marker}`,
      async (_p: string, _i: number, signal: AbortSignal) => new Promise<boolean>((r) => signal.addEventListener('abort', () => r(true))),
    ]).apply(ws, { signal: controller.signal })
    const err = await run.catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PatternCancelledError)
    expect((err as PatternCancelledError).exitCode).toBe(1)
    expect(processesWith(marker)).toEqual([])
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('base\n')
    await expectNoBranches(ws)
  })

  it('applies to a branch: the winner commits into that branch, not the workspace', async () => {
    const ws = await open()
    const parent = await ws.branch('parent')
    const outcome = await speculate([write('a.txt', 'in branch\n')]).apply(parent)
    expect(outcome.committed).toBe(true)
    expect(readFileSync(join(parent.path, 'a.txt'), 'utf8')).toBe('in branch\n')
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('base\n')
    expect((await ws.branches()).map((b) => b.name)).toEqual(['parent'])
    await parent.commit()
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('in branch\n')
    await expectNoBranches(ws)
  })

  it('refuses bad configuration with a usage error', () => {
    expect(() => speculate([])).toThrow(UsageError)
    expect(() => speculate(['true'], { maxParallel: 0 })).toThrow(UsageError)
    expect(() => speculate(['true'], { maxParallel: 1.5 })).toThrow(/whole number/)
    expect(() => speculate(['true'], { timeout: 'soon' })).toThrow(/invalid timeout/)
  })
})

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return false
  }
}
