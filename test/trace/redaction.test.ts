import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { Redactor } from '../../src/trace/redact/Redactor.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { FIXTURES, filesContaining, fp } from './cli.js'

const agent = join(FIXTURES, 'llmAgent.mjs')
const CANARY = {
  bearer: 'CANARYbearer7f3a9c2e5b1d',
  apiKey: 'CANARYxapikey41d8e2b77c',
  env: 'CANARYenv9c1b5d3e7a2f60',
  body: 'CANARYbody3e8f1a6c9d2b4',
  argv: 'CANARYargv5b2d8f1e4c7a9',
}
const KEY = 'a'.repeat(64)
const PROMPT_MARKER = 'PLAINTEXT-PROMPT-MARKER'

describe('redaction at capture time', () => {
  let server: FakeLlmServer
  let env: NodeJS.ProcessEnv
  beforeAll(async () => {
    server = await startFakeLlmServer()
    env = {
      OPENAI_BASE_URL: `${server.url}/v1`,
      ANTHROPIC_BASE_URL: server.url,
      ECHO_URL: `${server.url}/v1/echo`,
      OPENAI_API_KEY: CANARY.bearer,
      ANTHROPIC_API_KEY: CANARY.apiKey,
      MY_SERVICE_TOKEN: CANARY.env,
      CANARY_BODY: CANARY.body,
      AGENT_QUESTION: `${PROMPT_MARKER}: deploy with ${CANARY.env}`,
    }
  })
  afterAll(async () => server.close())

  for (const mode of ['secrets', 'content', 'encrypt'] as const) {
    it(`never writes a canary secret from headers, env, bodies or argv (--redact ${mode})`, async () => {
      const dir = tempDir(`redact-${mode}`)
      await initWorkspace({ dir })
      const runEnv = { ...env, ...(mode === 'encrypt' ? { FORKPOINT_KEY: KEY } : {}) }
      const rec = await fp(['run', '--record', '--json', '--redact', mode, '-o', 'out.run.json', '--', process.execPath, agent, '--api-key', CANARY.argv], {
        cwd: dir,
        env: runEnv,
      })
      expect(rec.code, rec.stderr).toBe(0)
      expect(JSON.parse(rec.stdout).steps).toBe(5)
      // the server really saw every secret: they were live in the requests
      const seen = JSON.stringify(server.requests.slice(-5))
      for (const c of [CANARY.bearer, CANARY.apiKey, CANARY.env, CANARY.body]) expect(seen).toContain(c)
      for (const c of Object.values(CANARY)) expect(filesContaining(dir, c), c).toEqual([])
      if (mode !== 'secrets') expect(filesContaining(dir, PROMPT_MARKER)).toEqual([])
      else expect(filesContaining(dir, PROMPT_MARKER).length).toBeGreaterThan(0)
    })
  }

  it('encrypted runs cannot be read or replayed without the key, and replay with it', async () => {
    const dir = tempDir('redact-enc')
    await initWorkspace({ dir })
    const rec = await fp(['run', '--record', '--json', '--redact', 'encrypt', '--', process.execPath, agent], { cwd: dir, env: { ...env, FORKPOINT_KEY: KEY } })
    expect(rec.code, rec.stderr).toBe(0)
    const { runId } = JSON.parse(rec.stdout)
    const shown = JSON.parse((await fp(['runs', 'show', runId, '--json'], { cwd: dir })).stdout).run
    expect(shown.encryption).toMatchObject({ alg: 'aes-256-gcm', kdf: 'raw' })
    expect(shown.steps[0].input).toMatch(/^fpenc:v1:/)
    expect(JSON.stringify(shown)).not.toContain(PROMPT_MARKER)
    const noKey = await fp(['replay', runId], { cwd: dir, env: { ...env, FORKPOINT_KEY: '' } })
    expect(noKey.code).toBe(2)
    expect(noKey.stderr).toContain('set FORKPOINT_KEY')
    const wrongKey = await fp(['replay', runId], { cwd: dir, env: { ...env, FORKPOINT_KEY: 'b'.repeat(64) } })
    expect(wrongKey.code).toBe(5)
    expect(wrongKey.stderr).toContain('not the key this run was encrypted with')
    const ok = await fp(['replay', runId, '--json'], { cwd: dir, env: { ...env, FORKPOINT_KEY: KEY } })
    expect(ok.code, ok.stderr).toBe(0)
    expect(JSON.parse(ok.stdout).diff.status).toBe('exact_match')
  })

  it('content-redacted runs diff but refuse to replay', async () => {
    const dir = tempDir('redact-content')
    await initWorkspace({ dir })
    const rec = await fp(['run', '--record', '--json', '--redact', 'content', '--', process.execPath, agent], { cwd: dir, env })
    const { runId } = JSON.parse(rec.stdout)
    const shown = JSON.parse((await fp(['runs', 'show', runId, '--json'], { cwd: dir })).stdout).run
    expect(shown.steps[0].input.messages[1].content).toMatch(/^\[redacted sha256:[0-9a-f]{64}\]$/)
    expect(shown.steps[0].input.model).toBe('gpt-test')
    const replay = await fp(['replay', runId], { cwd: dir, env })
    expect(replay.code).toBe(3)
    expect(replay.stderr).toContain('--redact content')
  })
})

describe('Redactor', () => {
  it('redacts sensitive keys, known values everywhere, secret-shaped text and user rules', () => {
    const r = new Redactor({
      env: { DB_PASSWORD: 'hunter2hunter2', HOME: '/root' },
      rules: { keys: ['ssn'], paths: ['$.messages[*].name'], patterns: ['\\b\\d{3}-\\d{2}-\\d{4}\\b'] },
    })
    const out = r.redact({
      headers: { Authorization: 'Bearer abcdefghijklmnop', 'X-Api-Key': 'k-123456789' },
      max_tokens: 10,
      note: 'password is hunter2hunter2 and key k-123456789',
      ssn: '123-45-6789',
      text: 'call 555-12-3456, token=abcd1234, url https://user:pw1234@host/x, key sk-abcdefghijklmnop1234',
      messages: [{ role: 'user', name: 'alice', content: 'hi' }],
      pem: '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----',
    })
    expect(out).toEqual({
      headers: { Authorization: '[redacted secret]', 'X-Api-Key': '[redacted secret]' },
      max_tokens: 10,
      note: 'password is [redacted secret] and key [redacted secret]',
      ssn: '[redacted secret]',
      text: 'call [redacted secret], token=[redacted secret], url https://user:[redacted secret]@host/x, key [redacted secret]',
      messages: [{ role: 'user', name: '[redacted secret]', content: 'hi' }],
      pem: '[redacted secret]',
    })
    expect(r.redactArgv(['node', 'a.js', '--token', 'xyz', '--password=abc123'])).toEqual(['node', 'a.js', '--token', '[redacted secret]', '--password=[redacted secret]'])
  })
})
