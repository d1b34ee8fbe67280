import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { transcriptText, transcriptToRun } from '../../src/trace/core/transcript.js'
import { Redactor } from '../../src/trace/redact/Redactor.js'
import { adversarialLines, filled, LINE_BYTES } from '../helpers/adversarialLines.js'
import { runCli } from '../helpers/cli.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'

describe('hostile trace data: linear redaction, rules from artifacts, bounded messages, exit 5 and 2 not 6', () => {
  const MARK = '[redacted secret]'

  describe('redaction takes time linear in the text', () => {
    for (const { name, line, expected } of adversarialLines()) {
      it(`redacts a 1 MiB line exactly: ${name}`, () => {
        expect(line.length).toBeGreaterThanOrEqual(LINE_BYTES)
        expect(new Redactor({ env: {} }).redactText(line) === expected).toBe(true)
      })
    }

    it('finds a learned value that almost matches everywhere (AAAA…B over 1 MiB of A) only where it is', () => {
      const secret = `${'A'.repeat(1000)}B`
      const redactor = new Redactor({ env: { SERVICE_TOKEN: secret } })
      const line = filled('A')
      expect(redactor.redactText(line) === line).toBe(true)
      expect(redactor.redactText(`${line}${secret}!`) === `${line}${MARK}!`).toBe(true)
    })

    it('a transcript whose one line is 1 MiB of A comes back byte for byte', () => {
      const text = `${JSON.stringify({ role: 'user', content: filled('A') })}\n`
      expect(transcriptText(transcriptToRun(Buffer.from(text), 'big.jsonl', { env: {} })) === text).toBe(true)
    })
  })

  describe("ci check never compiles the golden run's redaction rules", () => {
    const entry = join(import.meta.dirname, '..', 'trace', 'fixtures', 'gateAgent.mjs')
    let server: FakeLlmServer
    let env: Record<string, string>
    let dir: string
    beforeAll(async () => {
      server = await startFakeLlmServer()
      env = { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-test-0123456789abcdefghij' }
      dir = tempDir('ci-rules')
      await initWorkspace({ dir })
      const rec = await runCli(['ci', 'record', '--entrypoint', entry, '--out', 'golden.run.json'], { cwd: dir, env })
      expect(rec.code, rec.stderr).toBe(0)
    })
    afterAll(async () => server.close())

    /** The golden artifact with `rules` written into its meta, as anyone who edits the file can. */
    function goldenWith(rules: unknown): string {
      const golden = JSON.parse(readFileSync(join(dir, 'golden.run.json'), 'utf8'))
      golden.meta.redactionRules = rules
      const name = `golden-${Math.random().toString(16).slice(2)}.run.json`
      writeFileSync(join(dir, name), JSON.stringify(golden))
      return name
    }
    const check = (expected: string, ...flags: string[]) => runCli(['ci', 'check', '--entrypoint', entry, '--expected', expected, '--json', ...flags], { cwd: dir, env })

    it('a pattern, key or path in the artifact changes nothing: the check passes on what the agent did', async () => {
      const golden = goldenWith({ patterns: ['summarise'], keys: ['content'], paths: ['$.messages'] })
      const res = await check(golden)
      expect(res.code, res.stderr).toBe(0)
      expect(JSON.parse(res.stdout)).toMatchObject({ outcome: 'pass' })
    })

    it('a pattern that does not compile is not compiled (no error, no effect); the checker’s own bad pattern exits 2', async () => {
      const golden = goldenWith({ patterns: ['(unclosed', '(a+)+$'] })
      const res = await check(golden)
      expect(res.code, res.stderr).toBe(0)
      expect(res.stderr).not.toContain('regular expression')
      const own = await check(golden, '--redact-pattern', '(unclosed')
      expect(own.code).toBe(2)
      expect(own.stderr).toContain('is not a regular expression')
    })

    it("the checker's --redact-pattern applies to the live run", async () => {
      const res = await check('golden.run.json', '--redact-pattern', 'summarise')
      expect(res.code).toBe(1)
      expect(JSON.parse(res.stdout).trace.inputDiff).toEqual([{ op: 'replace', path: '$.messages[0].content', old: 'summarise the report', new: `${MARK} the report` }])
    })
  })
})
