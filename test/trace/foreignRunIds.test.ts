import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { ciCheckCommand, ciDiffCommand, ciNormalizeCommand, ciValidateCommand } from '../../src/cli/commands/ci.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { runArtifactText } from '../../src/trace/core/runArtifact.js'
import { tempDir } from '../helpers/tmp.js'
import { fp } from './cli.js'
import { makeRun } from './runFixtures.js'
import { callOperation, renderingOf } from '../helpers/callOperation.js'

/** Forkline's run ids are 32-hex uuids; its fixtures use ids like `test-run-001`. */
const FOREIGN_IDS = ['0f8fad5bd9cb469fa16570867728950e', 'test-run-001']
/** An agent that makes no call: it replays any run without steps. */
const IDLE = [process.execPath, '-e', '1']

async function workspaceWith(files: Record<string, string>): Promise<string> {
  const dir = tempDir('foreign-ids')
  await initWorkspace({ dir })
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  return dir
}

function artifact(runId: string, extra: Record<string, unknown> = {}): string {
  return runArtifactText({ ...makeRun([], runId), entrypoint: 'idle.js', ...extra })
}

describe('run artifacts with foreign run ids', () => {
  for (const runId of FOREIGN_IDS) {
    it(`${runId}: diff, replay, ci check, ci diff, runs show, snapshot --trace and runs export take it`, async () => {
      const dir = await workspaceWith({
        'a.run.json': artifact(runId),
        'b.run.json': runArtifactText({ ...makeRun([['llm', 'plan', { q: 1 }, 'ok']], runId), entrypoint: 'idle.js' }),
      })
      expect(renderingOf('diff').exit!(await callOperation('diff', { dir, a: 'a.run.json', b: 'b.run.json' }))).toBe(1)
      expect((await callOperation('runs_show', { dir, run: 'a.run.json' })).run.runId).toBe(runId)
      expect((await ciValidateCommand({ dir, artifact: 'a.run.json' })).runId).toBe(runId)
      expect((await ciDiffCommand({ dir, expected: 'a.run.json', actual: 'a.run.json' })).trace.status).toBe('exact_match')
      expect(await callOperation('replay', { dir, run: 'a.run.json', command: IDLE })).toMatchObject({ runId, served: 0 })
      writeFileSync(join(dir, 'idle.js'), '')
      expect((await ciCheckCommand({ dir, entrypoint: 'idle.js', expected: 'a.run.json' })).outcome).toBe('pass')

      await snapshotAgent({ dir, trace: 'b.run.json' })
      expect((await callOperation('runs_show', { dir, run: runId })).run.steps).toHaveLength(1)
      expect(await callOperation('runs_export', { dir, run: runId, out: 'out.run.json' })).toMatchObject({ runId, steps: 1 })
      expect(JSON.parse(readFileSync(join(dir, 'out.run.json'), 'utf8')).runId).toBe(runId)
    })
  }

  it('a stored run keeps its id as its ref name when a ref can spell it, else a digest-named ref inside refs/runs/', async () => {
    const ids = ['test-run-001', 'a:b', '..', '.hidden', '-x', 'x.lock', 'x.', '_y']
    const dir = await workspaceWith(Object.fromEntries(ids.map((id, i) => [`r${i}.run.json`, artifact(id)])))
    for (let i = 0; i < ids.length; i++) await snapshotAgent({ dir, trace: `r${i}.run.json` })
    const refs = readdirSync(join(dir, '.forkpoint', 'refs', 'runs'))
    expect(refs).toHaveLength(ids.length)
    expect(refs).toContain('test-run-001')
    expect(refs.filter((r) => r !== 'test-run-001')).toEqual(Array(ids.length - 1).fill(expect.stringMatching(/^_[0-9a-f]{64}$/)))
    // '..' names a directory to any command that takes a file too; the others are found by id
    for (const id of ids.filter((i) => i !== '..')) expect((await callOperation('runs_show', { dir, run: id })).run.runId).toBe(id)
  })

  it('ids outside the rule are refused with exit 5 naming it: empty, 129 characters, a path, a space', async () => {
    const bad = ['', 'x'.repeat(129), '../x', 'has space']
    const dir = await workspaceWith(Object.fromEntries(bad.map((id, i) => [`bad${i}.run.json`, artifact(id)])))
    for (let i = 0; i < bad.length; i++) {
      const res = await fp(['diff', `bad${i}.run.json`, `bad${i}.run.json`], { cwd: dir })
      expect([res.code, res.stderr]).toEqual([5, expect.stringMatching(/runId .* is not a run id \(1 to 128 letters, digits, '\.', '_', ':' or '-'\)/)])
    }
    const parent = await fp(['runs', 'show', 'p.run.json'], { cwd: (writeFileSync(join(dir, 'p.run.json'), artifact('ok', { parent: 'a/b' })), dir) })
    expect([parent.code, parent.stderr]).toEqual([5, expect.stringMatching(/parent "a\/b" is not a run id/)])
  })

  it('ci normalize takes any artifact: a runId or parent outside the rule is repaired, and the result is every normalised run id', async () => {
    const dir = await workspaceWith({
      'bad.run.json': artifact('has space', { parent: '../x' }),
      'good.run.json': artifact('test-run-001', { parent: '0f8fad5bd9cb469fa16570867728950e' }),
    })
    for (const name of ['bad', 'good']) {
      const res = await ciNormalizeCommand({ dir, input: `${name}.run.json`, out: `${name}.norm.run.json` })
      expect(res.runId).toBe('run-00000000000000000000')
      expect((await ciValidateCommand({ dir, artifact: `${name}.norm.run.json` })).runId).toBe('run-00000000000000000000')
    }
    expect(JSON.parse(readFileSync(join(dir, 'bad.norm.run.json'), 'utf8')).parent).toBeUndefined()
    expect(JSON.parse(readFileSync(join(dir, 'good.norm.run.json'), 'utf8')).parent).toBe('0f8fad5bd9cb469fa16570867728950e')
  })
})
