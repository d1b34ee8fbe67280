import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace, loadRun, Recorder, ReplayDivergenceError } from '../../src/index.js'
import { networkNamespaceAvailable } from '../../src/trace/record/spawnAgent.js'
import { RunStore } from '../../src/trace/core/RunStore.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { FIXTURES, fp } from './cli.js'

describe('Recorder SDK in-process', () => {
  it('records steps with nesting, and replays them without running the code', async () => {
    const dir = tempDir('sdk')
    await initWorkspace({ dir })
    let calls = 0
    const rec = await Recorder.start({ entrypoint: 'unit', dir, env: {} })
    const q = await rec.input('question', () => 'hi')
    await rec.step('outer', { q }, async () => {
      calls++
      return rec.tool('inner', { n: 1 }, () => 41 + 1)
    })
    await expect(
      rec.tool('flaky', {}, () => {
        throw new Error('nope')
      }),
    ).rejects.toThrow('nope')
    await rec.output('answer', 'done')
    const done = await rec.finish()
    if (done.kind !== 'recorded') throw new Error('expected a recorded run')
    const run = done.run
    expect(run.steps.map((s) => [s.type, s.name, s.meta?.['parent'] ?? null])).toEqual([
      ['input', 'question', null],
      ['step', 'outer', null],
      ['tool', 'inner', 1],
      ['tool', 'flaky', null],
      ['output', 'answer', null],
    ])
    expect(run.steps[3]!.error).toEqual({ name: 'Error', message: 'nope' })
    expect((await loadRun({ spec: run.runId, dir })).steps).toHaveLength(5)

    const replay = await Recorder.start({ entrypoint: 'unit', replay: run, env: {} })
    expect(await replay.input('question', () => 'CHANGED')).toBe('hi')
    expect(
      await replay.step('outer', { q: 'hi' }, () => {
        calls++
        return 0
      }),
    ).toBe(42)
    await expect(replay.tool('flaky', {}, () => 1)).rejects.toThrow('nope')
    await replay.output('answer', 'done')
    const replayed = await replay.finish()
    expect(calls).toBe(1)
    expect(replayed.kind === 'recorded' && replayed.diff?.status).toBe('exact_match')

    const diverging = await Recorder.start({ entrypoint: 'unit', replay: run, env: {} })
    await expect(diverging.input('other', () => 1)).rejects.toBeInstanceOf(ReplayDivergenceError)
    const changedOutput = await Recorder.start({ entrypoint: 'unit', replay: run, env: {} })
    await changedOutput.input('question', () => '')
    await changedOutput.step('outer', { q: 'hi' }, () => 0)
    await changedOutput.tool('flaky', {}, () => 1).catch(() => undefined)
    await changedOutput.output('answer', 'different')
    const r = await changedOutput.finish()
    expect(r.kind === 'recorded' && r.diff).toMatchObject({ status: 'output_divergence', idxA: 4 })
  })

  it('works on an explicit run store path without any workspace', async () => {
    const path = join(tempDir('db'), 'runs.db')
    const rec = await Recorder.start({ entrypoint: 'solo', save: false, env: {} })
    await rec.tool('t', { a: 1 }, () => 2)
    const done = await rec.finish()
    if (done.kind !== 'recorded') throw new Error('expected a run')
    const runs = RunStore.openFile({ path })
    await runs.save(done.run)
    expect(runs.list().map((r) => r.runId)).toEqual([done.run.runId])
    expect((await runs.get(done.run.runId.slice(4, 14))).steps[0]!.output).toBe(2)
    expect(runs.list({ step: 't' })).toHaveLength(1)
    expect(runs.list({ step: 'nothing' })).toHaveLength(0)
    runs.close()
  })
})

describe('agents in a child process', () => {
  let server: FakeLlmServer
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    server = await startFakeLlmServer()
    env = { OPENAI_BASE_URL: `${server.url}/v1`, ANTHROPIC_BASE_URL: server.url, OPENAI_API_KEY: 'sk-test-0123456789abcdefghij', ANTHROPIC_API_KEY: 'anthropic-test-key-0123' }
  })
  afterAll(async () => server.close())

  it('SDK steps and captured HTTP land in one run; the nested call is served with its step', async () => {
    const dir = tempDir('sdk-child')
    await initWorkspace({ dir })
    const rec = await fp(['run', '--record', '--json', '--', process.execPath, join(FIXTURES, 'sdkAgent.mjs')], { cwd: dir, env })
    expect(rec.code, rec.stderr).toBe(0)
    const run = await loadRun({ spec: JSON.parse(rec.stdout).runId, dir })
    expect(run.steps.map((s) => `${s.type} ${s.name}`)).toEqual(['input question', 'llm plan', 'llm openai.chat.completions', 'tool calc', 'output answer'])
    expect(run.steps[2]!.meta?.['parent']).toBe(1)
    const rep = await fp(['replay', run.runId, '--json'], { cwd: dir, env: { ...env, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } })
    expect(rep.code, rep.stderr).toBe(0)
    expect(JSON.parse(rep.stdout)).toMatchObject({ served: 4, steps: 5, diff: { status: 'exact_match' } })
    const broken = await fp(['replay', run.runId, '--json'], { cwd: dir, env: { ...env, CALC_BROKEN: '1' } })
    expect(broken.code).toBe(0) // the tool is served: its code does not run on replay
  })

  it('--deterministic pins Date and Math.random so time-stamped prompts replay', async () => {
    const dir = tempDir('det')
    await initWorkspace({ dir })
    const agent = [process.execPath, join(FIXTURES, 'sdkAgent.mjs')]
    const pinned = await fp(['run', '--record', '--json', '--deterministic', '--', ...agent], { cwd: dir, env: { ...env, STAMP: '1' } })
    const loose = await fp(['run', '--record', '--json', '--', ...agent], { cwd: dir, env: { ...env, STAMP: '1' } })
    expect((await fp(['replay', JSON.parse(pinned.stdout).runId], { cwd: dir, env: { ...env, STAMP: '1' } })).code).toBe(0)
    const drift = await fp(['replay', JSON.parse(loose.stdout).runId], { cwd: dir, env: { ...env, STAMP: '1' } })
    expect(drift.code).toBe(3)
    expect(drift.stderr).toContain('"plan"')
  })

  it('--live-from serves the prefix and records the rest live as a child run', async () => {
    const dir = tempDir('fork')
    await initWorkspace({ dir })
    const agent = [process.execPath, join(FIXTURES, 'sdkAgent.mjs')]
    const rec = await fp(['run', '--record', '--json', '--', ...agent], { cwd: dir, env })
    const runId = JSON.parse(rec.stdout).runId
    const before = server.requests.length
    const fork = await fp(['replay', runId, '--live-from', '3', '--json'], { cwd: dir, env: { ...env, CALC_BROKEN: '1' } })
    expect(fork.code, fork.stderr).toBe(0)
    const result = JSON.parse(fork.stdout)
    expect(result.served).toBe(3)
    expect(server.requests.length).toBe(before) // the LLM prefix was not paid for again
    const child = await loadRun({ spec: result.forked.runId, dir })
    expect(child.parent).toBe(runId)
    expect(child.steps[3]!.error).toMatchObject({ message: 'calculator offline' })
    const diff = await fp(['diff', result.forked.runId, '--json'], { cwd: dir })
    expect(diff.code).toBe(1)
    expect(JSON.parse(diff.stdout).trace).toMatchObject({ status: 'error_divergence', idxA: 3 })
  })

  it('records a Python agent through the proxy and replays it offline', async () => {
    const dir = tempDir('proxy')
    await initWorkspace({ dir })
    const py = ['python3', join(FIXTURES, 'pyAgent.py')]
    const rec = await fp(['run', '--record', '--proxy', '--json', '--', ...py], { cwd: dir, env })
    expect(rec.code, rec.stderr).toBe(0)
    const run = await loadRun({ spec: JSON.parse(rec.stdout).runId, dir })
    expect(run.steps.map((s) => `${s.type} ${s.name}`)).toEqual(['llm openai.chat.completions', 'llm anthropic.messages'])
    expect(run.steps[0]!.meta).toMatchObject({ url: `${server.url}/v1/chat/completions` })
    expect(JSON.stringify(run)).not.toContain('sk-test-0123456789abcdefghij')
    const recorded = rec.stderr.slice(rec.stderr.indexOf('200'))
    const rep = await fp(['replay', run.runId, '--json'], { cwd: dir, env })
    expect(rep.code, rep.stderr).toBe(0)
    expect(JSON.parse(rep.stdout)).toMatchObject({ served: 2, isolation: networkNamespaceAvailable() ? 'netns' : 'guard' })
    expect(rep.stderr.slice(rep.stderr.indexOf('200'))).toBe(recorded)
    const changed = await fp(['replay', run.runId], { cwd: dir, env: { ...env, AGENT_QUESTION: 'other' } })
    expect(changed.code).toBe(3)
    expect(changed.stderr).toContain('openai.chat.completions')
  })
})
