import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace, UsageError } from '../../src/index.js'
import { Redactor } from '../../src/trace/redact/Redactor.js'
import { SENSITIVE_ENV_WORDS } from '../../src/trace/redact/secretPatterns.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { FIXTURES, filesContaining, fp } from './cli.js'

const KEY = 'a'.repeat(64)

describe('a key in a URL path', () => {
  let server: FakeLlmServer
  const lookupKey = 'CANARYpathkey5e1c9a7b3d'
  beforeAll(async () => {
    server = await startFakeLlmServer()
  })
  afterAll(async () => server.close())

  for (const mode of ['secrets', 'content', 'encrypt'] as const) {
    it(`is redacted from step names, runs.db, objects, artifacts and output (--redact ${mode})`, async () => {
      const dir = tempDir(`urlkey-${mode}`)
      await initWorkspace({ dir })
      const env = { TOOL_URL: server.url, LOOKUP_API_KEY: lookupKey, ...(mode === 'encrypt' ? { FORKPOINT_KEY: KEY } : {}) }
      const rec = await fp(['run', '--record', '--json', '--redact', mode, '-o', 'out.run.json', '--', process.execPath, join(FIXTURES, 'lookupAgent.mjs')], { cwd: dir, env })
      expect(rec.code, rec.stderr).toBe(0)
      expect(server.requests.at(-1)!.path).toContain(lookupKey)
      const listed = await fp(['runs', '--step', 'lookup'], { cwd: dir })
      expect(listed.stdout).toContain('1 step ')
      const shown = await fp(['runs', 'show', 'latest'], { cwd: dir, env })
      expect(shown.stdout).toMatch(/tool\s+http GET 127\.0\.0\.1:\d+\/tools\/lookup\/\[redacted secret\]/)
      for (const out of [rec.stdout, rec.stderr, listed.stdout, shown.stdout]) expect(out).not.toContain(lookupKey)
      expect(filesContaining(dir, lookupKey)).toEqual([])
    })
  }

  it('is redacted from the divergence replay reports', async () => {
    const dir = tempDir('urlkey-replay')
    await initWorkspace({ dir })
    const env = { TOOL_URL: server.url, LOOKUP_API_KEY: lookupKey }
    expect((await fp(['run', '--record', '--', process.execPath, join(FIXTURES, 'lookupAgent.mjs')], { cwd: dir, env })).code).toBe(0)
    const same = await fp(['replay', 'latest'], { cwd: dir, env })
    expect(same.code, same.stderr).toBe(0)
    const changed = await fp(['replay', 'latest'], { cwd: dir, env: { ...env, LOOKUP_SUFFIX: '/v2' } })
    expect(changed.code).toBe(3)
    expect(changed.stderr).toContain('"http GET')
    expect(changed.stderr).toContain('/tools/lookup/[redacted secret]/v2')
    expect(changed.stdout + changed.stderr).not.toContain(lookupKey)
    expect(filesContaining(dir, lookupKey)).toEqual([])
  })
})

describe('Redactor: learned values and patterns', () => {
  it('a learned value never shortens a pattern match: the whole token after Bearer is redacted', () => {
    const r = new Redactor({ env: {} })
    expect(r.redact({ api_key: 'CANARYlearned42' })).toEqual({ api_key: '[redacted secret]' })
    expect(r.redactText('Authorization: Bearer CANARYlearned42TAILsecret99 end')).toBe('Authorization: Bearer [redacted secret] end')
    expect(r.redact({ note: 'try Bearer CANARYlearned42-more.tail please' })).toEqual({ note: 'try Bearer [redacted secret] please' })
    expect(r.redactText('the key CANARYlearned42 alone, and again CANARYlearned42')).toBe('the key [redacted secret] alone, and again [redacted secret]')
    expect(r.redactText('https://u:CANARYlearned42@host/x?token=abc123&key=CANARYlearned42zz')).toBe(
      'https://u:[redacted secret]@host/x?token=[redacted secret]&key=[redacted secret]',
    )
  })

  it('the environment heuristic covers every documented word, DBPASS included', () => {
    expect([...SENSITIVE_ENV_WORDS]).toEqual(['PASS', 'PASSWD', 'PASSWORD', 'SECRET', 'TOKEN', 'KEY', 'CREDENTIAL', 'PRIVATE', 'SESSION', 'COOKIE', 'AUTH'])
    for (const name of [
      'DBPASS',
      'MYSQL_PASSWD',
      'PGPASSWORD',
      'APP_SECRET',
      'GH_TOKEN',
      'STRIPE_KEY',
      'GOOGLE_CREDENTIALS',
      'SSH_PRIVATE',
      'SESSION_ID',
      'COOKIE_JAR',
      'AUTH_HEADER',
      'dbpass',
    ]) {
      const value = `CANARY-${name}-0123456789`
      const r = new Redactor({ env: { [name]: value, HOME: '/root/home/dir' } })
      expect(r.redactText(`connect with ${value} now`), name).toBe('connect with [redacted secret] now')
      expect(r.redactText('home is /root/home/dir')).toBe('home is /root/home/dir')
    }
  })
})

describe('--redact-path rules', () => {
  it('accepts dotted keys with any character, brackets, wildcards and descent, matching keys in any case', () => {
    const r = new Redactor({ env: {}, rules: { paths: ['$.headers.x-trace', "$['odd key']", '$..password', '$.items[*].note', '$.obj.*', '$.list[1]', '$.Headers.X-Upper'] } })
    const out = r.redact({
      headers: { 'x-trace': 'T1', 'x-other': 'kept', 'x-upper': 'U1' },
      'odd key': 'O1',
      deep: { er: [{ password: 'P1' }] },
      items: [{ note: 'N1', keep: 'kept' }, { note: 'N2' }],
      obj: { a: 'A1', b: { c: 'C1' } },
      list: ['kept', 'L1'],
    })
    expect(out).toEqual({
      headers: { 'x-trace': '[redacted secret]', 'x-other': 'kept', 'x-upper': '[redacted secret]' },
      'odd key': '[redacted secret]',
      deep: { er: [{ password: '[redacted secret]' }] },
      items: [{ note: '[redacted secret]', keep: 'kept' }, { note: '[redacted secret]' }],
      obj: { a: '[redacted secret]', b: '[redacted secret]' },
      list: ['kept', '[redacted secret]'],
    })
  })

  it('refuses a rule or pattern that does not parse with a UsageError, and the CLI with exit 2 before running anything', async () => {
    for (const rule of ['headers.x-trace', '$', '$.', '$.a..', '$.a[', '$.a[x]', '$.a["bad\\q"]', '$a']) {
      expect(() => Redactor.checkRules({ paths: [rule] }), rule).toThrow(UsageError)
    }
    expect(() => Redactor.checkRules({ patterns: ['(unclosed'] })).toThrow(UsageError)
    const dir = tempDir('redact-path')
    await initWorkspace({ dir })
    const server = await startFakeLlmServer()
    try {
      const canary = 'CANARYtraceheader8d2f4a'
      const agent = `const r = await fetch(${JSON.stringify(`${server.url}/v1/echo`)}, { method: 'POST', headers: { 'x-trace': process.env.TRACE_VALUE, 'content-type': 'application/json' }, body: '{}' }); await r.text()`
      const rec = await fp(['run', '--record', '--redact-path', '$.headers.x-trace', '--', process.execPath, '--input-type=module', '-e', agent], {
        cwd: dir,
        env: { TRACE_VALUE: canary },
      })
      expect(rec.code, rec.stderr).toBe(0)
      expect(JSON.stringify(server.requests.at(-1)!.headers)).toContain(canary)
      expect(filesContaining(dir, canary)).toEqual([])
      const before = server.requests.length
      const bad = await fp(['run', '--record', '--redact-path', 'headers.x-trace', '--', process.execPath, '--input-type=module', '-e', agent], { cwd: dir })
      expect(bad.code).toBe(2)
      expect(bad.stderr).toMatch(/^forkpoint: --redact-path "headers\.x-trace": a path starts at \$; write it like .*\n$/)
      expect(server.requests.length).toBe(before)
    } finally {
      await server.close()
    }
  })
})
