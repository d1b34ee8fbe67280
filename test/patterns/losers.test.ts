import { spawn, spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { Workspace, bestOfN, speculate } from '../../src/index.js'
import { CLI } from '../helpers/cli.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { eventually, expectNoBranches, expectNothingLeftIn, processesWith } from './leftovers.js'

/**
 * Every loser's process tree is gone when a pattern returns: checked at once, with no
 * waiting, since "gone later" is the bug (a losing run kept working after its outcome).
 */
const open = async () => Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'base\n' }) })
/** A candidate that wins once `marker`'s processes are all running, so that the losers are cancelled mid-run. */
const winsOnce = (marker: string, count: number) => async () => {
  expect(await eventually(() => processesWith(marker).length >= count, 30_000)).toBe(true)
  return true
}
/** A tree, not one process: twenty in the background, one that left the process group (setsid), one in the foreground. */
const tree = (marker: string) => `setsid sleep ${marker} & for i in $(seq 20); do sleep ${marker} & done; sleep ${marker}`

describe("a pattern returns only once every loser's processes are gone", () => {
  for (const isolate of [true, false]) {
    it(`speculate, ${isolate ? 'sandboxed' : 'plain'} command losers: no process left at return`, async () => {
      const ws = await open()
      const marker = `6${isolate ? 1 : 2}.${process.pid}1`
      const outcome = await speculate([tree(marker), tree(marker), winsOnce(marker, 44)], { isolate, maxParallel: 3 }).apply(ws)
      expect(processesWith(marker)).toEqual([])
      expect(outcome.results.map((r) => r.status)).toEqual(['cancelled', 'cancelled', 'succeeded'])
      await expectNoBranches(ws)
    })
  }

  it('speculate, an in-process loser that stops its child through its signal: the pattern waits for it', async () => {
    const ws = await open()
    const marker = `63.${process.pid}1`
    // the child takes a while to end on SIGTERM, as a real tool cleaning up does
    const loser = async (_path: string, _i: number, signal: AbortSignal) => {
      const child = spawn('sh', ['-c', `trap 'sleep 0.5; exit 0' TERM; while :; do sleep 0.05; done # ${marker}`], { signal, stdio: 'ignore' })
      child.on('error', () => undefined)
      await new Promise((r) => child.on('exit', r))
      return true
    }
    const outcome = await speculate([loser, winsOnce(marker, 1)], { maxParallel: 2 }).apply(ws)
    expect(processesWith(marker)).toEqual([])
    expect(outcome.results.map((r) => r.status)).toEqual(['cancelled', 'succeeded'])
    await expectNoBranches(ws)
  })

  it('a pattern cancelled by its signal: every candidate tree gone when it rejects', async () => {
    const ws = await open()
    const marker = `64.${process.pid}1`
    const controller = new AbortController()
    const run = bestOfN(tree(marker), { n: 2, isolate: false }).apply(ws, { signal: controller.signal })
    expect(await eventually(() => processesWith(marker).length >= 44, 30_000)).toBe(true)
    controller.abort()
    await expect(run).rejects.toMatchObject({ code: 'PatternCancelledError' })
    expect(processesWith(marker)).toEqual([])
    await expectNoBranches(ws)
  })

  it('forkpoint speculate: no loser process left when the command exits', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'base\n' })
    const marker = `65.${process.pid}1`
    const wins = `while [ "$(pgrep -fc 'sleep ${marker.replace('.', '\\.')}')" -lt 22 ]; do sleep 0.05; done; echo won > won.txt`
    const r = spawnSync(CLI, ['speculate', '--no-isolate', '--parallel', '2', '-c', tree(marker), '-c', wins], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    })
    expect(r.status, r.stderr).toBe(0)
    expect(processesWith(marker)).toEqual([])
    expectNothingLeftIn(dir)
  })
})
