import { spawn } from 'node:child_process'
import { chmodSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assertNoDiff, initWorkspace } from '../../src/index.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { CLI, FIXTURES, fp } from './cli.js'

const entry = join(FIXTURES, 'gateAgent.mjs')

describe('CI gate', () => {
  let server: FakeLlmServer
  let env: NodeJS.ProcessEnv
  let dir: string
  beforeAll(async () => {
    server = await startFakeLlmServer()
    env = { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-test-0123456789abcdefghij' }
    dir = tempDir('ci')
    await initWorkspace({ dir })
    const rec = await fp(['ci', 'record', '--entrypoint', entry, '--out', 'golden.run.json', '--json'], { cwd: dir, env })
    expect(rec.code, rec.stderr).toBe(0)
  })
  afterAll(async () => server.close())

  it('writes a normalised golden artifact: volatile fields fixed, generated ids replaced', async () => {
    const golden = JSON.parse(readFileSync(join(dir, 'golden.run.json'), 'utf8'))
    expect(golden).toMatchObject({ runId: 'run-00000000000000000000', startedAt: '1970-01-01T00:00:00.000Z' })
    expect(golden.steps[0]).toMatchObject({ startedAt: '1970-01-01T00:00:00.000Z', durationMs: 0 })
    expect(golden.steps[0].output.json).toMatchObject({ id: '<id-1>', created: 0 })
    expect(golden.steps[0].output.body.text).toContain('"id":"<id-1>"')
    expect(golden.steps[0].output.headers['x-request-id']).toBeUndefined()
    const again = await fp(['ci', 'record', '--entrypoint', entry, '--out', 'again.run.json'], { cwd: dir, env })
    expect(again.code).toBe(0)
    expect(readFileSync(join(dir, 'again.run.json'), 'utf8')).toBe(readFileSync(join(dir, 'golden.run.json'), 'utf8'))
  })

  it('ci check passes offline with the API gone, and fails with the first divergence when the prompt changes', async () => {
    const offlineEnv = { ...env, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }
    const pass = await fp(['ci', 'check', '--entrypoint', entry, '--expected', 'golden.run.json', '--json'], { cwd: dir, env: { ...env } })
    expect(pass.code, pass.stderr).toBe(0)
    expect(JSON.parse(pass.stdout)).toMatchObject({ outcome: 'pass', trace: { status: 'exact_match' } })
    const changed = await fp(['ci', 'check', '--entrypoint', entry, '--expected', 'golden.run.json', '--json'], { cwd: dir, env: { ...env, PROMPT: 'summarise the memo' } })
    expect(changed.code).toBe(1)
    const out = JSON.parse(changed.stdout)
    expect(out.trace).toMatchObject({ status: 'input_divergence', idxA: 0 })
    expect(out.trace.inputDiff).toEqual([{ op: 'replace', path: '$.messages[0].content', old: 'summarise the report', new: 'summarise the memo' }])
    const text = await fp(['ci', 'check', '--entrypoint', entry, '--expected', 'golden.run.json'], { cwd: dir, env: { ...offlineEnv, PROMPT: 'summarise the memo' } })
    expect(text.code).toBe(1)
    expect(text.stdout).toContain('input_divergence')
  })

  it('ci check exits 4 when the run matches but the agent reached for the network', async () => {
    const res = await fp(['ci', 'check', '--entrypoint', entry, '--expected', 'golden.run.json', '--json'], { cwd: dir, env: { ...env, TRY_NETWORK: '1' } })
    // the telemetry fetch is an extra step (a diff) — a raw socket is a pure offline violation
    expect([1, 4]).toContain(res.code)
    const raw = await fp(['ci', 'check', '--entrypoint', entry, '--expected', 'golden.run.json', '--json', '--actual-out', 'actual.run.json'], {
      cwd: dir,
      env: {
        ...env,
        NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent("import net from 'node:net'; process.on('exit', () => {}); setTimeout(() => net.connect(9, '127.0.0.1').on('error', () => {}), 0)")}`,
      },
    })
    expect(raw.code, raw.stderr).toBe(4)
    expect(JSON.parse(raw.stdout).offlineViolations).toEqual(['127.0.0.1:9'])
  })

  it('ci diff and ci normalize work on artifacts', async () => {
    const same = await fp(['ci', 'diff', '--expected', 'golden.run.json', '--actual', 'golden.run.json'], { cwd: dir })
    expect(same.code).toBe(0)
    const norm = await fp(['ci', 'normalize', 'golden.run.json', '-o', 'norm.run.json'], { cwd: dir })
    expect(norm.code).toBe(0)
    expect(readFileSync(join(dir, 'norm.run.json'), 'utf8')).toBe(readFileSync(join(dir, 'golden.run.json'), 'utf8'))
  })

  it('assertNoDiff passes on the golden run and throws the divergence report otherwise', async () => {
    await expect(assertNoDiff({ entrypoint: entry, expected: 'golden.run.json', dir, env: { ...process.env, ...env } })).resolves.toMatchObject({ outcome: 'pass' })
    await expect(assertNoDiff({ entrypoint: entry, expected: 'golden.run.json', dir, env: { ...process.env, ...env, PROMPT: 'other' } })).rejects.toThrow(
      /diverged.*\n.*input_divergence/s,
    )
  })

  it('replays offline as an unprivileged user (user + network namespace, no root)', async () => {
    const udir = tempDir('ci-nobody')
    chmodSync(udir, 0o777)
    const asNobody = (args: string[]) =>
      fp(['--help'], { cwd: udir }).then(
        () =>
          new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
            const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', CLI, ...args], { cwd: udir, env: { ...process.env, ...env, HOME: udir } })
            let stdout = ''
            let stderr = ''
            child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
            child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
            child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
          }),
      )
    expect((await asNobody(['init'])).code).toBe(0)
    const rec = await asNobody(['run', '--record', '--json', '--', process.execPath, entry])
    expect(rec.code, rec.stderr).toBe(0)
    const rep = await asNobody(['replay', 'latest', '--json'])
    expect(rep.code, rep.stderr).toBe(0)
    expect(JSON.parse(rep.stdout)).toMatchObject({ served: 1, isolation: 'netns', diff: { status: 'exact_match' } })
  })
})
