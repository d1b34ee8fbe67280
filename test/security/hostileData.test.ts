import { chownSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace, LedgerTamperedError, MalformedTensorFileError, RunArtifactError, snapshotAgent, verifyLedger, writeSafetensors } from '../../src/index.js'
import { parseSafetensors } from '../../src/image/model/safetensors.js'
import { transcriptText, transcriptToRun } from '../../src/trace/core/transcript.js'
import { Redactor } from '../../src/trace/redact/Redactor.js'
import { adversarialLines, filled, LINE_BYTES } from '../helpers/adversarialLines.js'
import { CLI, fp, runCli, runProgram } from '../helpers/cli.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

describe('hostile trace data: linear redaction, rules from artifacts, bounded messages, exit 5 and 2 not 6', () => {
  const MARK = '[redacted secret]'
  const nested = (depth: number, leaf: string) => '['.repeat(depth) + leaf + ']'.repeat(depth)

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

  describe('hostile values are quoted bounded in messages', () => {
    /** A safetensors file whose one tensor has `fields` in place of dtype and shape. */
    function tensorFile(name: string, fields: string): Buffer {
      const header = Buffer.from(`{${JSON.stringify(name)}:{${fields},"data_offsets":[0,0]}}`)
      const length = Buffer.alloc(8)
      length.writeBigUInt64LE(BigInt(header.length))
      return Buffer.concat([length, header])
    }

    it('a safetensors dtype nested 100,000 deep, or a 1 MiB tensor name, is MalformedTensorFileError with a short message', () => {
      for (const bytes of [tensorFile('t', `"dtype":${nested(100_000, '"F32"')},"shape":[0]`), tensorFile(filled('n'), '"dtype":"F99","shape":[0]')]) {
        const parse = () => parseSafetensors(bytes, 'hostile.safetensors')
        expect(parse).toThrow(MalformedTensorFileError)
        expect(parse).toThrow(/^[\s\S]{1,300}$/)
      }
    })
  })

  describe('llm export-lora refuses an inconsistent adapter before writing (exit 5)', () => {
    const prefix = (module: string) => `base_model.model.model.layers.0.self_attn.${module}`
    const matrix = (name: string, shape: number[]) => ({ name, dtype: 'F32' as const, shape, values: new Float32Array(shape.reduce((n, d) => n * d, 1)) })
    const cases: Record<string, ReturnType<typeof matrix>[]> = {
      'ranks that differ': [matrix(`${prefix('q_proj')}.lora_A.weight`, [4, 8]), matrix(`${prefix('q_proj')}.lora_B.weight`, [8, 2])],
      'an A without its B': [matrix(`${prefix('q_proj')}.lora_A.weight`, [4, 8]), matrix(`${prefix('v_proj')}.lora_B.weight`, [8, 4])],
      'a 2^50 x 0 matrix': [matrix(`${prefix('q_proj')}.lora_A.weight`, [2 ** 50, 0]), matrix(`${prefix('q_proj')}.lora_B.weight`, [0, 2 ** 50])],
    }
    for (const [name, tensors] of Object.entries(cases)) {
      it(name, async () => {
        const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
        const adapter = tempDir('lora')
        writeFileSync(join(adapter, 'adapter_model.safetensors'), writeSafetensors(tensors))
        const { id } = await snapshotAgent({ dir, model: adapter, message: name, allowEmpty: true })
        const out = join(tempDir('gguf'), 'adapter.gguf')
        const res = await fp(dir, 'llm', 'export-lora', id, '-o', out, '--alpha', '8')
        expect(res.code, res.stderr).toBe(5)
        expect(res.stderr).toContain('not a consistent LoRA adapter')
        expect(existsSync(out)).toBe(false)
      })
    }
  })

  describe('serve --listen on a port in use exits 2 naming it, as root and as nobody', () => {
    let busy: Server
    let port: number
    beforeAll(async () => {
      busy = createServer()
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
      port = (busy.address() as { port: number }).port
    })
    afterAll(() => busy.close())

    it('as root', async () => {
      const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
      const res = await fp(dir, 'serve', '--listen', `127.0.0.1:${port}`, '--no-watch')
      expect(res.code, res.stderr).toBe(2)
      expect(res.stderr).toContain(`127.0.0.1:${port}`)
      expect(res.stderr).toContain('in use')
    })

    it.runIf(process.getuid?.() === 0)('as nobody', async () => {
      const dir = tempDir('serve-nobody')
      await initWorkspace({ dir })
      chownTree(dir)
      const res = await asNobody(dir, ['serve', '--listen', `127.0.0.1:${port}`, '--no-watch'])
      expect(res.code, res.stderr).toBe(2)
      expect(res.stderr).toContain(`127.0.0.1:${port}`)
    })
  })

  describe('run artifacts, transcripts and ledgers nested 100,000 deep or holding 1e400 are invalid data (exit 5)', () => {
    it('a run artifact (ci replay --artifact)', async () => {
      const dir = tempDir('artifact-hostile')
      const step = (input: string) => `{"idx":0,"name":"s","type":"tool","input":${input},"output":null,"startedAt":"1970-01-01T00:00:00.000Z","durationMs":0}`
      const run = (input: string) =>
        `{"kind":"run","schemaVersion":1,"runId":"run-00000000000000000000","entrypoint":"e","startedAt":"1970-01-01T00:00:00.000Z","endedAt":"1970-01-01T00:00:00.000Z","status":"ok","redaction":"secrets","meta":{},"steps":[${step(input)}]}`
      const inputs: Array<[string, string]> = [
        ['infinite', '{"n":1e400}'],
        ['deep', nested(100_000, '1')],
      ]
      for (const [name, input] of inputs) {
        writeFileSync(join(dir, `${name}.run.json`), run(input))
        const res = await fp(dir, 'ci', 'replay', '--artifact', `${name}.run.json`)
        expect(res.code, `${name}: ${res.stderr}`).toBe(5)
        expect(res.stderr.length).toBeLessThan(500)
      }
    })

    it('a transcript (snapshot --trace) and its library parse', async () => {
      const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
      const lines: Array<[string, string]> = [
        ['infinite', '{"role":"user","content":"hi","n":1e400}'],
        ['deep', `{"role":"user","content":"hi","n":${nested(100_000, '1')}}`],
      ]
      for (const [name, line] of lines) {
        writeFileSync(join(dir, `${name}.jsonl`), `${line}\n`)
        expect(() => transcriptToRun(Buffer.from(`${line}\n`), `${name}.jsonl`, { env: {} })).toThrow(RunArtifactError)
        const res = await fp(dir, 'snapshot', '--trace', `${name}.jsonl`, '-m', name)
        expect(res.code, `${name}: ${res.stderr}`).toBe(5)
      }
    })

    it('a ledger (verifyLedger, which effects, merge and fork read through)', async () => {
      const { store } = await storeWorkspace({ 'a.txt': 'a\n' })
      const args = await store.writeObject({ kind: 'effect-args', schemaVersion: 1, tool: 't', args: '{}' })
      const entry = (extra: string) =>
        `{"seq":0,"prev":"${'0'.repeat(64)}","at":"2026-01-01T00:00:00.000Z","tool":"t","argsHash":"${args}","idempotencyKey":"k","class":"read","status":"deferred","resultHash":null,"extra":${extra}}`
      for (const extra of ['1e400', nested(100_000, '1')]) {
        const ledger = await store.writeBlob(Buffer.from(`{"kind":"ledger","schemaVersion":1,"chain":{"alg":"sha256"},"entries":[${entry(extra)}],"head":"${'0'.repeat(64)}"}`))
        await expect(verifyLedger({ store, ledger, env: {} })).rejects.toBeInstanceOf(LedgerTamperedError)
      }
    })
  })

  /** Every file and directory under `dir` owned by nobody. */
  function chownTree(path: string): void {
    chownSync(path, 65534, 65534)
    for (const d of readdirSync(path, { withFileTypes: true })) {
      if (d.isDirectory()) chownTree(join(path, d.name))
      else chownSync(join(path, d.name), 65534, 65534)
    }
  }

  /** `forkpoint ARGS` as nobody (setpriv) in `dir`. */
  function asNobody(dir: string, args: string[]) {
    return runProgram(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', 'env', `HOME=${dir}`, CLI, ...args], { cwd: dir })
  }
})
