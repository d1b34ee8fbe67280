import { describe, expect, it } from 'vitest'
import { PatternCancelledError, Workspace, bestOfN, speculate } from '../../src/index.js'
import { listExplorations } from '../../src/patterns/explorations.js'
import { storeWorkspace } from '../helpers/workspace.js'

describe('explorations: what each pattern run leaves in the store', () => {
  it('records a committed run, a run with no winner and a cancelled one, newest first, without their values', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'base\n' })
    const ws = await Workspace.open({ dir })
    await bestOfN((_path, attempt) => ({ success: true, score: attempt, value: 'a large output' }), { n: 2, isolate: false }).apply(ws)
    await speculate([() => false, () => false], { isolate: false }).apply(ws)
    const controller = new AbortController()
    const waiting = speculate([(_path: string, _i: number, signal: AbortSignal) => new Promise<boolean>((resolve) => signal.addEventListener('abort', () => resolve(true)))], {
      isolate: false,
    }).apply(ws, {
      signal: controller.signal,
    })
    controller.abort()
    await expect(waiting).rejects.toBeInstanceOf(PatternCancelledError)

    const [cancelled, noWinner, committed] = await listExplorations({ dir })
    expect(cancelled).toMatchObject({ pattern: 'speculate', status: 'cancelled', winner: null, error: expect.stringContaining('cancelled') as string })
    expect(noWinner).toMatchObject({ pattern: 'speculate', status: 'no-winner', winner: null, candidates: [{ status: 'failed' }, { status: 'failed' }] })
    expect(committed).toMatchObject({
      kind: 'exploration',
      pattern: 'bestOfN',
      status: 'committed',
      winner: 1,
      candidates: [
        { index: 0, status: 'succeeded', score: 0 },
        { index: 1, status: 'succeeded', score: 1 },
      ],
    })
    expect(JSON.stringify(committed)).not.toContain('a large output')
    expect(committed!.durationMs).toBeGreaterThanOrEqual(0)
    expect((await listExplorations({ dir, limit: 1 })).map((e) => e.id)).toEqual([cancelled!.id])
  })

  it('lists none in a store where no pattern ran', async () => {
    const { dir } = await storeWorkspace({})
    expect(await listExplorations({ dir })).toEqual([])
  })
})
