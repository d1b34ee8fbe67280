import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { hashPayload } from '../../src/trace/core/stepHash.js'
import { networkNamespaceAvailable } from '../../src/trace/record/spawnAgent.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { FIXTURES, fp } from './cli.js'

const agent = join(FIXTURES, 'llmAgent.mjs')

describe('record and replay offline (in-process capture)', () => {
  let server: FakeLlmServer
  let dir: string
  let env: NodeJS.ProcessEnv
  let recordedOut: string
  let runId: string

  beforeAll(async () => {
    server = await startFakeLlmServer()
    dir = tempDir('trace-e2e')
    await initWorkspace({ dir })
    env = {
      OPENAI_BASE_URL: `${server.url}/v1`,
      ANTHROPIC_BASE_URL: server.url,
      OPENAI_API_KEY: 'sk-test-0123456789abcdefghij',
      ANTHROPIC_API_KEY: 'anthropic-test-key-0123',
      ECHO_URL: `${server.url}/v1/echo`,
    }
    const rec = await fp(['run', '--record', '--json', '--', process.execPath, agent], { cwd: dir, env })
    expect(rec.code, rec.stderr).toBe(0)
    runId = (JSON.parse(rec.stdout) as { runId: string }).runId
    recordedOut = rec.stderr // under --json the agent's stdout goes to stderr
  })
  afterAll(async () => server.close())

  it('records OpenAI- and Anthropic-style calls (plain and SSE) as llm steps and plain HTTP as a tool step', async () => {
    expect(server.requests).toHaveLength(5)
    const show = await fp(['runs', 'show', runId, '--json'], { cwd: dir })
    const run = JSON.parse(show.stdout).run
    expect(run.steps.map((s: { type: string; name: string }) => `${s.type} ${s.name}`)).toEqual([
      'llm openai.chat.completions',
      'llm openai.chat.completions',
      'llm anthropic.messages',
      'llm anthropic.messages',
      expect.stringMatching(/^tool http POST 127\.0\.0\.1:\d+\/v1\/echo$/),
    ])
    const [chat, chatStream, , claudeStream] = run.steps
    expect(chat.input).toMatchObject({
      api: 'openai.chat.completions',
      model: 'gpt-test',
      temperature: 0,
      messages: [{ role: 'system' }, { role: 'user', content: 'what is 2+2?' }],
    })
    expect(chat.output.text).toBe('answer to: what is 2+2? ✓')
    // chunk boundaries are the network's; the events and the exact joined bytes are ours to keep
    expect(chatStream.output.events.length).toBeGreaterThan(3)
    expect(chatStream.output.body.chunks.join('')).toMatch(/^data: \{.*\n\ndata: \[DONE\]\n\n$/s)
    expect(chatStream.output.text).toBe('answer to: what is 2+2? (streamed) ✓')
    expect(claudeStream.output.events.map((e: { event: string }) => e.event)).toContain('content_block_delta')
    expect(claudeStream.output.text).toBe('answer to: what is 2+2? (streamed) ✓')
  })

  it('replays byte-identically with the server gone and the network namespace closed', async () => {
    await server.close()
    const before = server.requests.length
    const rep = await fp(['replay', runId, '--json'], { cwd: dir, env })
    expect(rep.code, rep.stderr).toBe(0)
    const result = JSON.parse(rep.stdout)
    expect(result).toMatchObject({ served: 5, steps: 5, diff: { status: 'exact_match' } })
    expect(result.isolation).toBe(networkNamespaceAvailable() ? 'netns' : 'guard')
    expect(rep.stderr).toBe(recordedOut)
    expect(recordedOut).toContain('data: [DONE]')
    expect(server.requests.length).toBe(before)
  })

  it('fails an unrecorded call during replay with exit 3 naming the step', async () => {
    const changed = await fp(['replay', runId, '--', process.execPath, agent], { cwd: dir, env: { ...env, AGENT_QUESTION: 'what is 3+3?' } })
    expect(changed.code).toBe(3)
    expect(changed.stderr).toMatch(
      /replay diverged: the agent made llm call "openai\.chat\.completions" .* not in the recording; the recording expects step 0 "openai\.chat\.completions" next/,
    )
    const extra = await fp(['replay', runId, '--', process.execPath, '-e', "await fetch('http://127.0.0.1:9/unrecorded'); console.log('reached')"], { cwd: dir, env })
    expect(extra.code).toBe(3)
    expect(extra.stdout).not.toContain('reached')
    expect(extra.stderr).toContain('http GET 127.0.0.1:9/unrecorded')
  })

  it('blocks raw network access during replay (exit 4 when only the guard sees it)', async () => {
    const script = "const net = await import('node:net'); const s = net.connect(9, '127.0.0.1'); s.on('error', (e) => { console.error('blocked:', e.message); })"
    const res = await fp(['replay', runId, '--', process.execPath, '--input-type=module', '-e', script], { cwd: dir, env })
    expect(res.code).toBe(4)
    expect(res.stderr).toContain('offline: network access to 127.0.0.1:9 is blocked')
  })

  it('exports the run and diffs two runs to the first divergence', async () => {
    const artifact = join(dir, 'first.run.json')
    expect((await fp(['runs', 'export', runId, '-o', artifact], { cwd: dir })).code).toBe(0)
    const text = readFileSync(artifact, 'utf8')
    expect(JSON.parse(text)).toMatchObject({ kind: 'run', schemaVersion: 1, runId })
    const changed = JSON.parse(text)
    changed.steps[2].input.messages[0].content = 'what is 5+5?'
    changed.steps[2].inputHash = hashPayload(changed.steps[2].input) // an edit that keeps the artifact valid
    changed.runId = 'run-ffffffffffffffffffff'
    writeFileSync(join(dir, 'second.run.json'), JSON.stringify(changed))
    const same = await fp(['diff', artifact, artifact], { cwd: dir })
    expect(same.code).toBe(0)
    const diff = await fp(['diff', 'first.run.json', 'second.run.json', '--json'], { cwd: dir })
    expect(diff.code).toBe(1)
    const { trace } = JSON.parse(diff.stdout)
    expect(trace).toMatchObject({ status: 'input_divergence', idxA: 2, idxB: 2, lastEqualIdx: 1 })
    expect(trace.inputDiff).toEqual([{ op: 'replace', path: '$.messages[0].content', old: 'what is 2+2?', new: 'what is 5+5?' }])
    expect(Object.keys(trace).sort()).toEqual([
      'contextA',
      'contextB',
      'explanation',
      'idxA',
      'idxB',
      'inputDiff',
      'lastEqualIdx',
      'outputDiff',
      'resync',
      'runA',
      'runB',
      'status',
    ])
    const text2 = await fp(['diff', 'first.run.json', 'second.run.json'], { cwd: dir })
    expect(text2.stdout).toContain('diverged: input_divergence')
    expect(text2.stdout).toContain('~ $.messages[0].content: "what is 2+2?" -> "what is 5+5?"')
  })

  it('lists runs newest first with --limit', async () => {
    const list = await fp(['runs', '--json', '--limit', '1'], { cwd: dir })
    const { runs } = JSON.parse(list.stdout)
    expect(runs).toHaveLength(1)
    expect(runs[0]).toMatchObject({ runId, steps: 5, llmCalls: 4, toolCalls: 1, status: 'ok' })
  })
})
