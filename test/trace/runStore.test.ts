import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { gc, initWorkspace, loadRun, openStore, verify } from '../../src/index.js'
import { listRefs } from '../../src/store/refs.js'
import { tempDir } from '../helpers/tmp.js'
import { FIXTURES, fp } from './cli.js'

describe('runs in the store', () => {
  it('an agent killed mid-run still leaves a stored, failed run with every finished step', async () => {
    const dir = tempDir('killed')
    await initWorkspace({ dir })
    const rec = await fp(['run', '--record', '--json', '--', process.execPath, join(FIXTURES, 'killedAgent.mjs')], { cwd: dir })
    expect(rec.code, rec.stderr).toBe(0)
    const summary = JSON.parse(rec.stdout)
    expect(summary).toMatchObject({ status: 'failed', exitCode: 137, steps: 2 })
    const run = await loadRun({ spec: summary.runId, dir })
    expect(run.steps.map((s) => s.output)).toEqual([1, 2])
  })

  it('keeps runs through gc (refs/runs/<id>) and passes verify', async () => {
    const dir = tempDir('gc-runs')
    await initWorkspace({ dir })
    const rec = await fp(['run', '--record', '--json', '--', process.execPath, join(FIXTURES, 'killedAgent.mjs')], { cwd: dir })
    const { runId, digest } = JSON.parse(rec.stdout)
    const { store } = await openStore({ dir })
    expect(await listRefs(store, 'refs/runs/')).toEqual([{ name: `refs/runs/${runId}`, id: digest }])
    const collected = await gc({ store })
    expect(collected.removed).not.toContain(digest)
    expect((await verify({ store })).problems ?? []).toEqual([])
    expect((await loadRun({ spec: runId, dir })).runId).toBe(runId)
    expect((await fp(['show', digest, '--json'], { cwd: dir })).stdout).toContain('"kind": "run"')
  })
})
