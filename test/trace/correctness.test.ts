import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { normalizeRun } from '../../src/trace/ci/normalizeRun.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { FIXTURES, filesContaining, fp } from './cli.js'
import { makeRun } from './runFixtures.js'

describe('an agent that does not read a response body', () => {
  let server: FakeLlmServer
  beforeAll(async () => {
    server = await startFakeLlmServer()
  })
  afterAll(async () => server.close())

  for (const [how, tail] of [
    ['ends on its own', ''],
    ['calls process.exit', 'process.exit(0)'],
  ] as const) {
    it(`still records the exchange, and its replay serves it (the agent ${how})`, async () => {
      const dir = tempDir('unread-body')
      await initWorkspace({ dir })
      const agent = `const r = await fetch(process.env.ECHO_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' }); console.log('status', r.status); ${tail}`
      const command = [process.execPath, '--input-type=module', '-e', agent]
      const rec = await fp(['run', '--record', '--json', '--', ...command], { cwd: dir, env: { ECHO_URL: `${server.url}/v1/echo` } })
      expect(rec.code, rec.stderr).toBe(0)
      expect(JSON.parse(rec.stdout).steps).toBe(1)
      const shown = JSON.parse((await fp(['runs', 'show', 'latest', '--json'], { cwd: dir })).stdout).run
      expect(shown.steps[0].output).toMatchObject({ status: 200 })
      // on its own the process waits for the body; process.exit keeps whatever had arrived
      if (!tail) expect(shown.steps[0].output).toMatchObject({ json: { echo: { n: 1 } } })
      const rep = await fp(['replay', 'latest', '--json'], { cwd: dir, env: { ECHO_URL: `${server.url}/v1/echo` } })
      expect(rep.code, rep.stderr).toBe(0)
      expect(JSON.parse(rep.stdout)).toMatchObject({ served: 1, diff: { status: 'exact_match' } })
    })
  }
})

describe('ci record and ci check exit codes', () => {
  it('a missing entrypoint exits 2, a failing agent exits 3 naming the failure, --out makes its directory', async () => {
    const dir = tempDir('ci-exit')
    await initWorkspace({ dir })
    writeFileSync(join(dir, 'ok.mjs'), "console.log('fine')\n")
    writeFileSync(join(dir, 'fail.mjs'), 'await new Promise((r) => setTimeout(r, 1)); process.exitCode = 7\n')
    const missing = await fp(['ci', 'record', '--entrypoint', 'nope.mjs', '--out', 'golden.run.json'], { cwd: dir })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/^forkpoint: --entrypoint nope\.mjs: no such file/)
    expect(existsSync(join(dir, 'golden.run.json'))).toBe(false)
    const failing = await fp(['ci', 'record', '--entrypoint', 'fail.mjs', '--out', 'golden.run.json'], { cwd: dir })
    expect(failing.code).toBe(3)
    expect(failing.stderr).toMatch(/the agent fail\.mjs exited 7 while being recorded; no golden run was written/)
    expect(existsSync(join(dir, 'golden.run.json'))).toBe(false)
    const nested = await fp(['ci', 'record', '--entrypoint', 'ok.mjs', '--out', 'golden/runs/ok.run.json'], { cwd: dir })
    expect(nested.code, nested.stderr).toBe(0)
    expect(JSON.parse(readFileSync(join(dir, 'golden/runs/ok.run.json'), 'utf8'))).toMatchObject({ kind: 'run', status: 'ok' })
    const check = await fp(['ci', 'check', '--entrypoint', 'nope.mjs', '--expected', 'golden/runs/ok.run.json'], { cwd: dir })
    expect(check.code).toBe(2)
    expect(check.stderr).toMatch(/^forkpoint: --entrypoint nope\.mjs: no such file/)
    const pass = await fp(['ci', 'check', '--entrypoint', 'ok.mjs', '--expected', 'golden/runs/ok.run.json', '--actual-out', 'out/actual.run.json'], { cwd: dir })
    expect(pass.code, pass.stderr).toBe(0)
    expect(existsSync(join(dir, 'out/actual.run.json'))).toBe(true)
  })
})

describe('run specs and generated ids', () => {
  let server: FakeLlmServer
  beforeAll(async () => {
    server = await startFakeLlmServer()
  })
  afterAll(async () => server.close())

  it('diff takes latest for a run, as the README says RUN may be', async () => {
    const dir = tempDir('diff-latest')
    await initWorkspace({ dir })
    const agent =
      "const r = await fetch(process.env.ECHO_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: process.env.N }) }); await r.text()"
    const record = (n: string) =>
      fp(['run', '--record', '--json', '--', process.execPath, '--input-type=module', '-e', agent], { cwd: dir, env: { ECHO_URL: `${server.url}/v1/echo`, N: n } })
    const first = JSON.parse((await record('1')).stdout).runId as string
    expect((await record('2')).code).toBe(0)
    const diff = await fp(['diff', first, 'latest', '--json'], { cwd: dir })
    expect(diff.code, diff.stderr).toBe(1)
    expect(JSON.parse(diff.stdout).trace).toMatchObject({ status: 'input_divergence', runA: first, inputDiff: [{ op: 'replace', path: '$.body.n', old: '1', new: '2' }] })
    expect((await fp(['diff', 'latest', 'last'], { cwd: dir })).code).toBe(0)
    const alone = await fp(['diff', 'latest'], { cwd: dir })
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain('has no parent run to compare with')
  })

  it('normalising replaces short generated ids (chatcmpl-1) and leaves words alone', () => {
    const run = makeRun([['llm', 'chat', { note: 'thread-safe batch_size call_back' }, { id: 'chatcmpl-1', tool: 'call_2', again: 'chatcmpl-1' }]])
    const normal = normalizeRun(run).steps[0]!
    expect(normal.output).toEqual({ id: '<id-1>', tool: '<id-2>', again: '<id-1>' })
    expect(normal.input).toEqual({ note: 'thread-safe batch_size call_back' })
  })

  it('ci check --live passes when only a short generated id changes', async () => {
    let n = 0
    const api = createServer((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({ id: `chatcmpl-${++n}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }] }),
        )
      })
    })
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r))
    try {
      const dir = tempDir('live-ids')
      await initWorkspace({ dir })
      const env = { OPENAI_BASE_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}/v1`, OPENAI_API_KEY: 'sk-test-0123456789abcdefghij' }
      const entry = join(FIXTURES, 'gateAgent.mjs')
      expect((await fp(['ci', 'record', '--entrypoint', entry, '--out', 'golden.run.json'], { cwd: dir, env })).code).toBe(0)
      expect(readFileSync(join(dir, 'golden.run.json'), 'utf8')).not.toContain('chatcmpl-1')
      const live = await fp(['ci', 'check', '--live', '--entrypoint', entry, '--expected', 'golden.run.json', '--json'], { cwd: dir, env })
      expect(live.code, live.stdout).toBe(0)
      expect(n).toBe(2)
    } finally {
      api.closeAllConnections()
      await new Promise((r) => api.close(r))
    }
  })
})

describe('the recorded entrypoint of sh -c', () => {
  it('is the command as given (secrets redacted), listed by it, and replays', async () => {
    const dir = tempDir('sh-c')
    await initWorkspace({ dir })
    writeFileSync(join(dir, 'agent.mjs'), "console.log('agent', process.argv.length)\n")
    const canary = 'CANARYshellpass6b1e9d'
    const script = `node agent.mjs --password=${canary} && echo done`
    const rec = await fp(['run', '--record', '--json', '--', 'sh', '-c', script], { cwd: dir })
    expect(rec.code, rec.stderr).toBe(0)
    const entrypoint = "sh -c 'node agent.mjs --password=[redacted secret] && echo done'"
    const { runs } = JSON.parse((await fp(['runs', '--json', '--entrypoint', entrypoint], { cwd: dir })).stdout)
    expect(runs).toHaveLength(1)
    expect(runs[0].entrypoint).toBe(entrypoint)
    expect(filesContaining(dir, canary)).toEqual([])
    const plain = await fp(['run', '--record', '--json', '--', 'sh', '-c', 'node agent.mjs && echo done'], { cwd: dir })
    const run = JSON.parse((await fp(['runs', 'show', JSON.parse(plain.stdout).runId, '--json'], { cwd: dir })).stdout).run
    expect(run.entrypoint).toBe("sh -c 'node agent.mjs && echo done'")
    expect(run.meta.command).toEqual(['sh', '-c', 'node agent.mjs && echo done'])
    const rep = await fp(['replay', 'latest'], { cwd: dir })
    expect(rep.code, rep.stderr).toBe(0)
    expect(rep.stdout).toContain('agent 2\ndone\n')
  })
})
