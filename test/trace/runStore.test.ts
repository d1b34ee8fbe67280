import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { gc, initWorkspace, loadRun, openStore, verify } from '../../src/index.js'
import { listRefs } from '../../src/store/refs.js'
import { runNode } from '../helpers/cli.js'
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

  // Two processes creating runs.db at once can each hold a read lock and ask for the write lock
  // the switch to WAL needs; SQLite then answers SQLITE_BUSY at once, without waiting (seen in CI).
  it('processes creating the same run index at once all open it', async () => {
    const dir = tempDir('runs-db-race')
    const opener = `
      const { RunStore } = await import(${JSON.stringify(new URL('../../dist/trace/core/RunStore.js', import.meta.url).href)})
      const startAt = Number(process.argv[1])
      while (Date.now() < startAt) {} // all processes start their opens together
      for (let i = 0; i < 25; i++) RunStore.openFile({ path: ${JSON.stringify(dir)} + '/runs-' + i + '.db' }).close()
      console.log('opened')`
    const startAt = String(Date.now() + 1500)
    const results = await Promise.all(Array.from({ length: 4 }, () => runNode(['--input-type=module', '-e', opener, startAt], { cwd: dir })))
    for (const r of results) expect(r.stderr + r.stdout).toBe('opened\n')
  })
})
