import { execFileSync, spawnSync } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { chmodSync, chownSync, existsSync, mkdirSync, promises as fs, readdirSync, readFileSync, writeFileSync, symlinkSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { basename, join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compress } from 'zstd-napi'
import { parseSafetensors } from '../../src/image/model/safetensors.js'
import {
  allowStoreDirectories,
  initWorkspace,
  LedgerTamperedError,
  MalformedTensorFileError,
  RunArtifactError,
  SignatureError,
  UsageError,
  pullImage,
  pushImage,
  snapshotAgent,
  verifyLedger,
  writeSafetensors,
} from '../../src/index.js'
import { MediaType } from '../../src/registry/manifest/mediaTypes.js'
import { LocalPacks } from '../../src/store/LocalPacks.js'
import { packIndexBytes } from '../../src/store/PackIndex.js'
import { openTransport } from '../../src/registry/transport/openTransport.js'
import { parseRemote } from '../../src/registry/transport/parseRemote.js'
import { sha256 } from '../../src/objects/digest.js'
import { GuestAgent } from '../../src/machine/qemu/GuestAgent.js'
import { QemuGuestAgent } from '../../src/machine/qemu/QemuGuestAgent.js'
import { transcriptText, transcriptToRun } from '../../src/trace/core/transcript.js'
import { Redactor } from '../../src/trace/redact/Redactor.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { type Runner, forkpoint, runAs } from '../branch/toolsInBranch.js'
import { adversarialLines, filled, LINE_BYTES } from '../helpers/adversarialLines.js'
import { fpAs, giveToNobody } from '../helpers/privilegedModes.js'
import { postHookAs, runAsUser, serveAs } from '../helpers/claudeHookAs.js'
import { useServices } from '../helpers/serviceCleanup.js'
import { MAX_HOOK_REQUEST } from '../../src/service/serviceNames.js'
import { useCountingServer } from '../helpers/countingServer.js'
import { CLI, fpInProcess, runCli, runProgram } from '../helpers/cli.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { type RegistryServer, startRegistry } from '../helpers/registryServer.js'
import { tempDir, makeWorkspace } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { FOUR_GIB_OF_ZEROS, zeroFrame, zstdBombLayout, zstdBombPack } from '../helpers/zstdBombs.js'
import { emptyStore, expectRefusedUntouched, makeImage } from '../registry/fixtures.js'

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
    // spawned: the agent inherits the CLI's stderr, which is captured only when the CLI is a child
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
        const res = await fpInProcess(dir, 'llm', 'export-lora', id, '-o', out, '--alpha', '8')
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
      const res = await fpInProcess(dir, 'serve', '--listen', `127.0.0.1:${port}`, '--no-watch')
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
        const res = await fpInProcess(dir, 'ci', 'replay', '--artifact', `${name}.run.json`)
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
        const res = await fpInProcess(dir, 'snapshot', '--trace', `${name}.jsonl`, '-m', name)
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

describe('registry: packs, layouts and signatures from elsewhere', () => {
  const NOBODY = 65534
  const asRoot = process.getuid?.() === 0
  const CHILD = fileURLToPath(new URL('../helpers/registryChild.mjs', import.meta.url))
  const PEAK_RSS_BYTES = 300 * 1024 * 1024
  const NOTE = Buffer.from('{"kind":"note","schemaVersion":1,"text":"an honest object before the zeros"}')

  /** A directory the caller (root or nobody) can read, holding one it can write. */
  function workDir(uid: number): { dir: string; store: string } {
    const dir = tempDir('hostile-registry')
    chmodSync(dir, 0o755)
    const store = join(dir, 'stores')
    mkdirSync(store)
    chownSync(store, uid, uid)
    return { dir, store: join(store, '.forkpoint') }
  }

  /** Run the operation in a child process as `uid`: the exit code its error carries and its peak RSS. */
  async function inChild(uid: number, op: 'unpack' | 'pull', input: string, store: string): Promise<{ exitCode: number; message: string; peakRssBytes: number }> {
    const node = [process.execPath, CHILD, op, input, store]
    const argv = uid === 0 ? node : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...node]
    const r = await runProgram(argv, { cwd: fileURLToPath(new URL('../..', import.meta.url)), env: { HOME: join(store, '..') } })
    const line = r.stdout.trim().split('\n').pop() ?? ''
    if (!line.startsWith('{')) throw new Error(`the child exited ${r.code} without a report:\n${r.stdout}\n${r.stderr}`)
    return JSON.parse(line) as { exitCode: number; message: string; peakRssBytes: number }
  }

  const callers = asRoot ? [0, NOBODY] : [process.getuid?.() ?? 0]

  describe.each(callers)('zstd bombs stop at the size the index declares, in bounded memory (uid %i)', (uid) => {
    it('a frame of 4 GiB of zeros whose index declares 3.5 KB: unpack and pull refuse it (exit 5) with peak RSS under 300 MB', async () => {
      const { dir, store } = workDir(uid)
      const declared = Buffer.alloc(3584)
      const frame = zeroFrame(Buffer.alloc(0), FOUR_GIB_OF_ZEROS)
      expect(frame.length).toBeLessThan(140 * 1024)
      const file = await zstdBombPack(dir, frame, declared)
      const remote = await zstdBombLayout(dir, frame, declared)
      for (const [op, input] of [
        ['unpack', file],
        ['pull', remote],
      ] as const) {
        const result = await inChild(uid, op, input, `${store}-${op}`)
        expect(result.exitCode, result.message).toBe(5)
        expect(result.peakRssBytes).toBeLessThan(PEAK_RSS_BYTES)
        expect(result.message).toMatch(/would decompress to more than the 3584 bytes its index declares/)
      }
    })

    it('a pack whose honest object goes on with a 4 GiB zero tail: refused (exit 5) with peak RSS under 300 MB', async () => {
      const { dir, store } = workDir(uid)
      const file = await zstdBombPack(dir, zeroFrame(NOTE, FOUR_GIB_OF_ZEROS), NOTE)
      const result = await inChild(uid, 'unpack', file, store)
      expect(result.exitCode, result.message).toBe(5)
      expect(result.peakRssBytes).toBeLessThan(PEAK_RSS_BYTES)
      expect(result.message).toMatch(new RegExp(`would decompress to more than the ${NOTE.length} bytes its index declares`))
    })
  })

  describe.each(callers)('a pack of the first format (a zstd tar) is not read at all (uid %i)', (uid) => {
    /** A zstd-compressed tar of a manifest and one object, as the first format had it (built with GNU tar), its tar cut to `keep` bytes when given. */
    function firstFormatPack(dir: string, keep?: number): string {
      const object = Buffer.from('{"kind":"note","schemaVersion":1,"text":"a note in a first-format pack, long enough to be cut"}')
      const hex = sha256(object).slice(7)
      const tree = join(dir, `tar-${keep ?? 'whole'}`)
      mkdirSync(join(tree, 'objects/sha256'), { recursive: true })
      writeFileSync(join(tree, 'objects/sha256', hex), object)
      writeFileSync(
        join(tree, 'forkpoint-pack.json'),
        canonicalBytes({ kind: 'pack', schemaVersion: 1, root: sha256(object), objects: [{ digest: sha256(object), size: object.length }] }),
      )
      const tar = execFileSync('tar', ['--format=ustar', '--owner=0', '--group=0', '--mtime=@0', '-cf', '-', '-C', tree, 'forkpoint-pack.json', `objects/sha256/${hex}`])
      const file = join(dir, `first-${keep ?? 'whole'}.fpk`)
      writeFileSync(file, compress(keep === undefined ? tar : tar.subarray(0, keep)))
      return file
    }

    it('cut inside its first entry (the tar reader then threw from an event handler and the process died), or whole: exit 5, the process lives', async () => {
      const { dir, store } = workDir(uid)
      for (const keep of [600, undefined]) {
        const result = await inChild(uid, 'unpack', firstFormatPack(dir, keep), `${store}-${keep ?? 'whole'}`)
        expect(result.exitCode, result.message).toBe(5)
        expect(result.message).toMatch(/is not a forkpoint pack/)
      }
    })
  })

  describe.each(callers)('an OCI layout is checked before any of it names a file (uid %i)', (uid) => {
    /** A layout holding a pushed image, its index.json then replaced by `entries` (as JSON). */
    async function hostileLayout(entries: (pushed: { digest: string; size: number }) => unknown[]): Promise<{ remote: string; store: string }> {
      const { dir, store } = workDir(uid)
      const image = await makeImage({ 'a.txt': 'alpha' })
      const layout = join(dir, 'layout')
      const pushed = await pushImage({ store: image.store, id: image.id, remote: `file://${layout}:v1`, credentials: null })
      const manifests = entries({ digest: pushed.manifest, size: (await fs.stat(join(layout, 'blobs/sha256', pushed.manifest.slice(7)))).size })
      await fs.writeFile(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests }))
      return { remote: `file://${layout}:v1`, store }
    }
    const tagged = (fields: object) => ({ mediaType: 'application/vnd.oci.image.index.v1+json', annotations: { 'org.opencontainers.image.ref.name': 'v1' }, ...fields })

    it.each([
      ['manifests: [null]', (p: { digest: string; size: number }) => [null, tagged(p)], /manifests\.0/],
      ['a numeric digest', (p: { digest: string; size: number }) => [tagged({ digest: 5, size: p.size })], /manifests\.0\.digest/],
      [
        'a digest naming ../../../etc/passwd',
        (p: { digest: string; size: number }) => [tagged({ digest: 'sha256:../../../../../../etc/passwd', size: p.size })],
        /manifests\.0\.digest/,
      ],
      [
        'an annotation that is not a string',
        (p: { digest: string; size: number }) => [{ ...tagged(p), annotations: { 'org.opencontainers.image.ref.name': 'v1', n: 5 } }],
        /manifests\.0\.annotations/,
      ],
    ])('%s: the pull refuses the layout as malformed before any entry names a file (exit 5)', async (_what, entries, where) => {
      const { remote, store } = await hostileLayout(entries)
      const result = await inChild(uid, 'pull', remote, store)
      expect(result.exitCode, result.message).toBe(5)
      expect(result.message).toMatch(/the layout index .* is malformed/)
      expect(result.message).toMatch(where)
    })

    it('an index.json of the largest size read (4 MiB) nesting two million deep is refused before it is parsed, in bounded memory (exit 5)', async () => {
      const { remote, store } = await hostileLayout((p) => [tagged(p)])
      const layout = remote.slice('file://'.length, -':v1'.length)
      const depth = (4 * 1024 * 1024 - 64) / 2
      await fs.writeFile(join(layout, 'index.json'), `{"schemaVersion":2,"manifests":${'['.repeat(depth)}${']'.repeat(depth)}}`)
      const result = await inChild(uid, 'pull', remote, store)
      expect(result.exitCode, result.message).toBe(5)
      expect(result.message).toMatch(/is not JSON/)
      expect(result.peakRssBytes).toBeLessThan(200 * 1024 * 1024) // parsed first, it peaked at 368 MB
    })
  })

  describe('a signature holds for the image where it was pushed: its digest, repository and tag', () => {
    let registry: RegistryServer
    beforeAll(async () => {
      registry = await startRegistry({ dir: tempDir('registry') })
    })
    afterAll(async () => {
      await registry?.stop()
    })

    const keys = () => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519')
      return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() }
    }

    /** Point `tag` of the repository at the index `from` names, as someone with write access to it could. */
    async function retag(from: string, tag: string): Promise<void> {
      const transport = await openTransport(parseRemote(from), { credentials: null })
      const { bytes } = (await transport.getManifest(from.slice(from.lastIndexOf(':') + 1)))!
      await transport.putManifest({ descriptor: { mediaType: MediaType.index, digest: sha256(bytes), size: bytes.length, artifactType: MediaType.image }, bytes }, tag)
    }

    const expectUnverified = (remote: string, verifyKey: string) => expectRefusedUntouched((store) => pullImage({ store, remote, verifyKey, credentials: null }), SignatureError)

    it.each(['file', 'oci'] as const)('%s: a signed image re-tagged under another name (tag substitution, rollback) fails verification (exit 5)', async (kind) => {
      const key = keys()
      const image = await makeImage({ 'a.txt': 'release 1' })
      const repository = kind === 'file' ? `file://${tempDir('layout')}` : `oci://${registry.host}/team/signed`
      const pushed = await pushImage({ store: image.store, id: image.id, remote: `${repository}:v1`, signingKey: key.privateKey, credentials: null })
      expect((await pullImage({ store: await emptyStore(), remote: `${repository}:v1`, verifyKey: key.publicKey, credentials: null })).verified).toBe(true)
      await retag(`${repository}:v1`, 'v2')
      const { error } = await expectUnverified(`${repository}:v2`, key.publicKey)
      expect(error.message).toMatch(/not signed by the given key as .*:v2/)
      // by digest the image itself is pinned: the signature of its repository holds, under whichever tag
      expect((await pullImage({ store: await emptyStore(), remote: `${repository}@${pushed.manifest}`, verifyKey: key.publicKey, credentials: null })).verified).toBe(true)
    })

    it('a signed layout moved to another place fails verification (exit 5); an image signed under two tags verifies under both', async () => {
      const key = keys()
      const image = await makeImage({ 'a.txt': 'release 2' })
      const layout = tempDir('layout')
      for (const tag of ['v2', 'latest']) await pushImage({ store: image.store, id: image.id, remote: `file://${layout}:${tag}`, signingKey: key.privateKey, credentials: null })
      for (const tag of ['v2', 'latest']) {
        expect((await pullImage({ store: await emptyStore(), remote: `file://${layout}:${tag}`, verifyKey: key.publicKey, credentials: null })).verified).toBe(true)
      }
      const moved = join(tempDir('moved'), 'layout')
      await fs.cp(layout, moved, { recursive: true })
      await expectUnverified(`file://${moved}:v2`, key.publicKey)
    })

    it('a malformed PEM, or a directory, given as the key is a usage error (exit 2) naming what is wrong', async () => {
      const image = await makeImage({ 'a.txt': 'signed' })
      const remote = `file://${tempDir('layout')}:v1`
      await pushImage({ store: image.store, id: image.id, remote, signingKey: keys().privateKey, credentials: null })
      const malformed = '-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n'
      for (const [verifyKey, message] of [
        [malformed, /verify key is not a valid PEM key/],
        [tempDir('not-a-key'), /verify key names a directory, not a PEM file/],
      ] as const) {
        const error = (await pullImage({ store: await emptyStore(), remote, verifyKey, credentials: null }).catch((e: unknown) => e)) as UsageError
        expect(error).toBeInstanceOf(UsageError)
        expect(error.exitCode).toBe(2)
        expect(error.message).toMatch(message)
      }
      const error = (await pushImage({ store: image.store, id: image.id, remote, signingKey: malformed, credentials: null }).catch((e: unknown) => e)) as UsageError
      expect(error).toBeInstanceOf(UsageError)
      expect(error.exitCode).toBe(2)
    })
  })
})

describe('imported runs, model directories and foreign .git are data', () => {
  const quiet = "console.log('agent ran')"
  const plant = "require('node:fs').writeFileSync('pwned', 'x'); console.log('agent ran')"

  const runners: Runner[] = process.getuid?.() === 0 ? [{ user: 'root' }, { user: 'nobody' }] : []

  /** A fresh directory the runner owns. */
  function ownDir(runner: Runner, label: string): string {
    const dir = tempDir(label)
    if (runner.user === 'nobody') chownSync(dir, 65534, 65534)
    return dir
  }

  /** `forkpoint ARGS` in `cwd` as the runner. */
  const cli = (runner: Runner, cwd: string, ...args: string[]) => fpAs(runner.user, cwd, ...args)

  /** A workspace with a store, owned by the runner. */
  async function ownWorkspace(runner: Runner, label: string): Promise<string> {
    const dir = ownDir(runner, label)
    expect((await cli(runner, dir, 'init')).code).toBe(0)
    return dir
  }

  /** A run artifact recorded elsewhere whose recorded command writes `pwned` in the directory it runs in. */
  async function hostileArtifact(): Promise<string> {
    const elsewhere = tempDir('hostile-author')
    await initWorkspace({ dir: elsewhere })
    const rec = await fpInProcess(elsewhere, 'run', '--record', '-o', 'evil.run.json', '--', process.execPath, '-e', quiet)
    expect(rec.code, rec.stderr).toBe(0)
    const run = JSON.parse(readFileSync(join(elsewhere, 'evil.run.json'), 'utf8')) as { meta: { command: string[] } }
    run.meta.command = [process.execPath, '-e', plant]
    return JSON.stringify(run)
  }

  for (const runner of runners) {
    it(`as ${runner.user}: a run imported with snapshot --trace never runs its recorded command on replay, with or without --trust-command; one recorded here does`, async () => {
      const home = await ownWorkspace(runner, 'hostile-home')
      writeFileSync(join(home, 'evil.run.json'), await hostileArtifact())
      expect((await cli(runner, home, 'snapshot', '--trace', 'evil.run.json')).code).toBe(0)
      for (const args of [
        ['replay', 'latest'],
        ['replay', 'latest', '--trust-command'],
        ['replay', 'evil.run.json', '--trust-command'],
      ]) {
        const replay = await cli(runner, home, ...args)
        expect([args, replay.code, replay.stderr]).toEqual([args, 2, expect.stringMatching(/was imported into this store, not recorded by its own run --record/)])
        expect(existsSync(join(home, 'pwned'))).toBe(false)
      }
      const own = await cli(runner, home, 'replay', 'latest', '--', process.execPath, '-e', quiet)
      expect([own.code, own.stderr]).toEqual([0, expect.any(String)])
      expect(existsSync(join(home, 'pwned'))).toBe(false)
      // a run this store's own run --record recorded replays with its own command, as ever
      expect((await cli(runner, home, 'run', '--record', '--', process.execPath, '-e', quiet)).code).toBe(0)
      expect((await cli(runner, home, 'replay', 'latest')).code).toBe(0)
    })

    it(`as ${runner.user}: snapshot --model refuses a symlink leading out of the model directory (exit 5), and stores nothing of its target`, async () => {
      const home = await ownWorkspace(runner, 'model-home')
      const secret = join(ownDir(runner, 'secret'), 'shadow')
      writeFileSync(secret, 'root:$6$secret-hash:19000:0:99999:7:::\n')
      const model = ownDir(runner, 'model')
      writeFileSync(join(model, 'adapter_config.json'), '{"r": 8}\n')
      symlinkSync(secret, join(model, 'config.json'))
      const refused = await cli(runner, home, 'snapshot', '--model', model, '--allow-empty')
      expect([refused.code, refused.stderr]).toEqual([5, expect.stringMatching(/config\.json is a symlink leading out of the model directory/)])
      expect(spawnSync('grep', ['-r', '-l', 'secret-hash', join(home, '.forkpoint')]).status).toBe(1) // no file of the store holds it
      // a link inside the directory, and a Hugging Face cache snapshot linking to its repository's blobs, are followed
      const repo = ownDir(runner, 'hf-repo')
      mkdirSync(join(repo, 'blobs'))
      mkdirSync(join(repo, 'snapshots', 'rev1'), { recursive: true })
      writeFileSync(join(repo, 'blobs', 'abc123'), '{"r": 8}\n')
      symlinkSync('../../blobs/abc123', join(repo, 'snapshots', 'rev1', 'config.json'))
      symlinkSync('config.json', join(repo, 'snapshots', 'rev1', 'alias.json'))
      const cached = await cli(runner, home, 'snapshot', '--model', join(repo, 'snapshots', 'rev1'), '--allow-empty')
      expect([cached.code, cached.stderr]).toEqual([0, expect.not.stringMatching(/symlink/)])
    })

    it(`as ${runner.user}: an image from another store has its .git/config, hooks and .git files held back at clone and checkout (listed); --trust-git writes them`, async () => {
      const marker = join(ownDir(runner, 'fsmonitor'), 'ran')
      const author = await makeWorkspace({
        'a.txt': 'a\n',
        '.git/config': `[core]\n\tfsmonitor = "touch ${marker}"\n`,
        '.git/HEAD': 'ref: refs/heads/main\n',
        '.git/hooks/post-checkout': { content: `#!/bin/sh\ntouch ${marker}\n`, mode: 0o755 },
        'sub/.git': 'gitdir: /elsewhere\n',
      })
      expect((await fpInProcess(author, 'init')).code).toBe(0)
      expect((await fpInProcess(author, 'snapshot', '-m', 'with git files')).code).toBe(0)
      const own = join(tempDir('own'), 'out')
      const ownCheckout = await fpInProcess(author, 'checkout', 'HEAD', '--into', own)
      expect([ownCheckout.code, ownCheckout.stdout]).toEqual([0, expect.not.stringContaining('held back')]) // this store's own image: as it is
      expect(existsSync(join(own, '.git', 'config'))).toBe(true)
      const layoutDir = tempDir('layout')
      expect((await fpInProcess(author, 'push', 'HEAD', `file://${layoutDir}:v1`)).code).toBe(0)
      if (runner.user === 'nobody') runAs({ user: 'root' }, layoutDir, ['chown', '-R', 'nobody:nogroup', layoutDir])
      const layout = `file://${layoutDir}:v1`

      const into = join(ownDir(runner, 'clone'), 'agent')
      const clone = await cli(runner, ownDir(runner, 'cwd'), 'clone', layout, '--into', into)
      expect(clone.code, clone.stderr).toBe(0)
      expect(clone.stdout).toMatch(/held back[^\n]*\n {2}\.git\/config\n {2}\.git\/hooks\/post-checkout\n {2}sub\/\.git\n {2}to write them: /)
      expect(['a.txt', '.git/HEAD'].map((p) => existsSync(join(into, p)))).toEqual([true, true])
      expect(['.git/config', '.git/hooks/post-checkout', 'sub/.git'].map((p) => existsSync(join(into, p)))).toEqual([false, false, false])
      runAs(runner, into, ['git', 'status'])
      expect(existsSync(marker)).toBe(false)

      const home = await ownWorkspace(runner, 'puller')
      expect((await cli(runner, home, 'pull', layout, '--tag', 'theirs')).code).toBe(0)
      const held = await cli(runner, home, 'checkout', 'theirs', '--into', join(ownDir(runner, 'held'), 'out'), '--json')
      expect(JSON.parse(held.stdout).heldBack).toEqual(['.git/config', '.git/hooks/post-checkout', 'sub/.git'])
      // restored paths: a tree no image has (without a.txt), so one the checkout made in memory
      const paths = await cli(runner, home, 'checkout', 'theirs', '--json', '--', '.git', 'sub')
      expect(paths.code, paths.stderr).toBe(0)
      expect(JSON.parse(paths.stdout).heldBack).toEqual(['.git/config', '.git/hooks/post-checkout', 'sub/.git'])
      expect(['a.txt', '.git/HEAD', '.git/config', '.git/hooks', 'sub/.git'].map((p) => existsSync(join(home, p)))).toEqual([false, true, false, false, false])
      const trusted = join(ownDir(runner, 'trusted'), 'out')
      expect((await cli(runner, home, 'checkout', 'theirs', '--into', trusted, '--trust-git')).code).toBe(0)
      expect(readFileSync(join(trusted, '.git', 'config'), 'utf8')).toContain('fsmonitor')
      const restored = await cli(runner, into, 'checkout', 'HEAD', '--trust-git', '--force')
      expect(restored.code, restored.stderr).toBe(0)
      expect(existsSync(join(into, '.git', 'hooks', 'post-checkout'))).toBe(true)
    })
  }
})

describe('hostile graphs, objects and the checkout budget', async () => {
  const { Store, checkout, cloneImage, initWorkspace, pullImage, unpackImage, verifyLedgers } = await import('../../src/index.js')
  const { sha256 } = await import('../../src/objects/digest.js')
  const { objectPathIn } = await import('../../src/store/objectPath.js')
  const { updateRef } = await import('../../src/store/refs.js')
  const { resolveId } = await import('../../src/store/resolveId.js')
  const { readShallow } = await import('../../src/store/shallow.js')
  const { canonicalBytes } = await import('../../src/util/canonicalJson.js')
  const { makeSnapshot } = await import('../../src/objects/Snapshot.js')
  const { treeObject } = await import('../../src/objects/Tree.js')
  const { chunksBomb, claimShallow, dagBomb, deepTree, hostileImage, packOfBytes, sharedBlobBomb } = await import('../helpers/hostileImages.js')
  const { storeState } = await import('../registry/fixtures.js')
  const { makeWorkspace, tempDir } = await import('../helpers/tmp.js')
  const { CLI, runProgram } = await import('../helpers/cli.js')
  type Store = Awaited<ReturnType<typeof Store.open>>
  type Image = Awaited<ReturnType<typeof hostileImage>>
  const MiB = 1024 ** 2

  /** A workspace with a store of its own: the receiving side. */
  const receiver = async (): Promise<{ dir: string; store: Store }> => {
    const dir = await makeWorkspace({ 'mine.txt': 'mine' })
    await initWorkspace({ dir })
    return { dir, store: await Store.open(join(dir, '.forkpoint')) }
  }

  /** Expect `receive` into a fresh store to be refused with exit 5 (matching `error`), the store as it was. */
  const refusedUntouched = async (receive: (store: Store) => Promise<unknown>, error: Record<string, unknown>): Promise<void> => {
    const { store } = await receiver()
    const before = await storeState(store)
    await expect(receive(store)).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(await storeState(store)).toEqual(before)
  }

  /** Expect unpack, pull and clone of `image` each refused with exit 5 (matching `error`), nothing kept and nothing checked out. */
  const refusedEverywhere = async (image: Image, error: Record<string, unknown>): Promise<void> => {
    await refusedUntouched((store) => unpackImage({ store, input: image.pack }), error)
    await refusedUntouched((store) => pullImage({ store, remote: image.remote }), error)
    const into = join(tempDir('clone'), 'into')
    await expect(cloneImage({ remote: image.remote, into })).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(existsSync(into)).toBe(false)
  }

  it('refuses a shared-subtree (DAG) bomb of 26 trees (2^26 paths) at unpack, pull and clone, visiting each tree once', async () => {
    const bomb = await hostileImage(tempDir, (store) => dagBomb(store, 26))
    const error = { code: 'InvalidImageError', data: { limit: 'maxCheckoutPaths' }, message: expect.stringMatching(/FORKPOINT_MAX_CHECKOUT_PATHS/) }
    await refusedEverywhere(bomb, error)
    // let in under a raised budget, it came from elsewhere: holding its git files back must not walk its 2^26 paths first
    const { store } = await receiver()
    const { id } = await unpackImage({ store, input: bomb.pack, limits: { maxExpansion: 1e9, maxCheckoutPaths: 1e12 } })
    const into = join(tempDir('checkout'), 'into')
    await expect(checkout({ store, id, into })).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(existsSync(into)).toBe(false)
  })

  it('refuses a chunk list naming one 1 MiB blob 2,048 times (2 GiB) at unpack, pull and clone, and at checkout of one let in', async () => {
    const bomb = await hostileImage(tempDir, (store) => chunksBomb(store, MiB, 2048))
    const error = { code: 'InvalidImageError', data: { limit: 'maxExpansion' }, message: expect.stringMatching(/2147483648 bytes.*FORKPOINT_MAX_EXPANSION/) }
    await refusedEverywhere(bomb, error)
    // let in under a raised budget, it still cannot be checked out under the default one
    const { store } = await receiver()
    const { id } = await unpackImage({ store, input: bomb.pack, limits: { maxExpansion: 4096 } })
    const into = join(tempDir('checkout'), 'into')
    await expect(checkout({ store, id, into })).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(existsSync(into)).toBe(false)
  })

  it('refuses 32 directories of 32 files sharing one 1 MiB blob (1 GiB), in place too, before a byte is written', async () => {
    const bomb = await hostileImage(tempDir, (store) => sharedBlobBomb(store, 32, 32, MiB))
    const error = { code: 'InvalidImageError', data: { limit: 'maxExpansion', value: 1024 * MiB } }
    await refusedEverywhere(bomb, error)
    const { dir, store } = await receiver()
    const { id } = await unpackImage({ store, input: bomb.pack, limits: { maxExpansion: 4096 } })
    await expect(checkout({ dir, id, force: true })).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(existsSync(join(dir, 'd0'))).toBe(false)
    expect(existsSync(join(dir, 'mine.txt'))).toBe(true)
  })

  it('refuses a budget an option sets lower: bytes a checkout writes', async () => {
    const image = await hostileImage(tempDir, (store) => sharedBlobBomb(store, 2, 2, MiB))
    await refusedUntouched((store) => unpackImage({ store, input: image.pack, limits: { maxCheckoutBytes: 3 * MiB } }), {
      code: 'InvalidImageError',
      data: { limit: 'maxCheckoutBytes', max: 3 * MiB, value: 4 * MiB },
      message: expect.stringMatching(/FORKPOINT_MAX_CHECKOUT_BYTES \(option limits.maxCheckoutBytes\)/),
    })
  })

  it.runIf(process.getuid?.() === 0)('refuses the bombs for a caller who is not root (nobody) too: unpack, pull and clone exit 5, nothing written', async () => {
    const home = tempDir('hostile-nobody')
    const asNobody = (cwd: string, ...args: string[]) =>
      runProgram(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', 'env', `HOME=${home}`, CLI, ...args], { cwd })
    for (const build of [(store: Store) => dagBomb(store, 26), (store: Store) => chunksBomb(store, MiB, 2048), (store: Store) => deepTree(store, 300)]) {
      const image = await hostileImage(tempDir, build)
      const layout = /^file:\/\/(.*):bomb$/.exec(image.remote)![1]!
      const recv = join(home, 'recv')
      await fs.mkdir(recv, { recursive: true })
      for (const dir of [dirname(image.pack), layout, home]) expect(spawnSync('chown', ['-R', 'nobody:nogroup', dir]).status).toBe(0)
      expect((await asNobody(recv, 'init')).code).toBe(0)
      allowStoreDirectories([join(recv, '.forkpoint')]) // nobody's store, read here by root to compare
      const before = await storeState(await Store.open(join(recv, '.forkpoint')))
      for (const args of [
        ['unpack', image.pack],
        ['pull', image.remote],
        ['clone', image.remote, '--into', join(home, 'clone')],
      ]) {
        const r = await asNobody(recv, ...args)
        expect({ args, code: r.code }).toEqual({ args, code: 5 })
        expect(r.stderr).toMatch(/FORKPOINT_MAX_CHECKOUT_PATHS|FORKPOINT_MAX_EXPANSION|more than 256 directories deep/)
      }
      expect(await storeState(await Store.open(join(recv, '.forkpoint')))).toEqual(before)
      expect(existsSync(join(home, 'clone'))).toBe(false)
      allowStoreDirectories([])
      await fs.rm(recv, { recursive: true })
    }
  })

  it('refuses a tree 10,000 directories deep at unpack, pull and clone (exit 5, not a stack overflow)', async () => {
    const deep = await hostileImage(tempDir, (store) => deepTree(store, 10_000))
    await refusedEverywhere(deep, { code: 'PathLimitError', message: expect.stringMatching(/more than 256 directories deep/) })
  })

  /** An honest snapshot's canonical text (of an empty tree, whose bytes come with it). */
  const honestSnapshot = (): { text: string; tree: Buffer } => {
    const tree = treeObject([])
    return { text: canonicalBytes(makeSnapshot({ parents: [], tree: tree.digest, message: 'hostile', createdAt: new Date(0) })).toString(), tree: tree.bytes }
  }

  it.each([
    ['an unknown field nested 100,000 deep', (text: string) => `${text.slice(0, -1)},"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
    ['a second "world" key', (text: string) => `${text.slice(0, -1)},"world":{"tree":"${sha256('elsewhere')}"}}`],
    ['a "__proto__" key', (text: string) => `${text.slice(0, -1)},"zz":{"__proto__":{"polluted":true}}}`],
    ['a number a double cannot hold', (text: string) => `${text.slice(0, -1)},"zz":1e400}`],
    ['a schemaVersion of 1e400 (which fork tripped on)', (text: string) => text.replace('"schemaVersion":1', '"schemaVersion":1e400')],
  ])('refuses a snapshot with %s at unpack (exit 5)', async (_what, tamper) => {
    const { text, tree } = honestSnapshot()
    const pack = await packOfBytes(tempDir, Buffer.from(tamper(text)), [tree])
    await refusedUntouched((store) => unpackImage({ store, input: pack }), { message: expect.stringMatching(/not a structured object/) })
  })

  it('reports a ledger holding 1e400 as malformed (a verify problem), not an internal error', async () => {
    const { store } = await receiver()
    const ledger = await store.writeBlob(Buffer.from(`{"chain":"sha256","entries":[{"seq":1e400}],"head":"x","kind":"ledger","schemaVersion":1}`))
    const tree = await store.writeBlob(treeObject([]).bytes)
    const id = await store.writeObject(makeSnapshot({ parents: [], tree, message: 'with effects', layers: { effects: ledger } }))
    await updateRef({ store, name: 'refs/tags/ledger', id, message: 'test' })
    expect((await verifyLedgers({ store, env: {} })).problems).toMatchObject([{ ledger, reason: 'malformed', message: expect.stringMatching(/too large for a double/) }])
  })

  it('refuses a ref name longer than a file name may be as a usage error (exit 2), not ENAMETOOLONG', async () => {
    const { dir, store } = await receiver()
    const long = 'r'.repeat(300)
    await expect(checkout({ dir, id: long })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/unknown id or ref/) })
    await expect(resolveId(store, `${long}~1`)).rejects.toMatchObject({ exitCode: 2 })
    const id = await resolveId(store, 'HEAD').catch(() => sha256('none'))
    await expect(updateRef({ store, name: `refs/tags/${long}`, id, message: 'test' })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/too long/) })
  })

  it('checks a digest before it names a path: sha256:../../../etc/passwd names none (exit 5)', () => {
    expect(() => objectPathIn('/store/objects/sha256', 'sha256:../../../etc/passwd')).toThrow(expect.objectContaining({ exitCode: 5, code: 'MalformedObjectError' }))
  })

  it('refuses a shallow annotation naming a digest that is not a snapshot of the image, and records no cut snapshot whose parents the store holds', async () => {
    const image = await hostileImage(tempDir, (store) => store.writeBlob(treeObject([]).bytes))
    await claimShallow(image.pack, [sha256('a snapshot whose parent the receiving store lacks')])
    await refusedUntouched((store) => unpackImage({ store, input: image.pack }), { code: 'InvalidImageError', message: expect.stringMatching(/not a snapshot of the image/) })
    await claimShallow(image.pack, [image.id])
    const { store } = await receiver()
    await unpackImage({ store, input: image.pack })
    expect(await readShallow(store)).toEqual(new Set())
  })
})

describe("a guest's agent: what a guest sends the host is bounded", () => {
  const MiB = 2 ** 20

  /** 65 MiB of `A`, no line end, as fast as the host reads it. */
  async function flood(socket: Socket): Promise<void> {
    const chunk = Buffer.alloc(MiB, 'A')
    for (let i = 0; i < 65 && !socket.destroyed; i++) if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve))
  }

  /** A unix socket that plays a hostile guest: `greeting` on connect, then, once asked anything, 65 MiB that never end a line. */
  async function hostileGuest(greeting: string): Promise<{ path: string; close: () => void }> {
    const path = join(tempDir('hostile-guest'), 'agent.sock')
    const server = createServer((socket) => {
      socket.on('error', () => undefined) // the host hangs up on it
      socket.write(greeting)
      socket.once('data', () => void flood(socket))
    })
    await new Promise<void>((resolve) => server.listen(path, resolve))
    return { path, close: () => server.close() }
  }

  for (const [agent, connect, greeting] of [
    ['our busybox agent', (path: string) => GuestAgent.connect(path, 'mhostile0'), '@@HELLO 0.1\n'],
    ['qemu-guest-agent', (path: string) => QemuGuestAgent.connect(path, 'mhostile0'), ''],
  ] as const)
    it(`${agent}: a line over 64 MiB ends the connection (CorruptDataError, exit 5) instead of growing the host's memory`, async () => {
      const guest = await hostileGuest(greeting)
      try {
        const channel = await connect(guest.path)
        const err = await channel.exec('echo hi').catch((e: unknown) => e)
        channel.close()
        expect(err).toMatchObject({ exitCode: 5, message: expect.stringMatching(/over 64 MiB without ending a line/) })
      } finally {
        guest.close()
      }
    })
})

describe('a git repository checked out over a git repository: .git is content, the store is not', () => {
  const runners: Runner[] = process.getuid?.() === 0 ? [{ user: 'root' }, { user: 'nobody' }] : []
  const commit = ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m']

  /** A git repository with a forkpoint store, owned by the runner. */
  function gitRepositoryOf(runner: Runner, label: string, file: string): string {
    const dir = tempDir(label)
    writeFileSync(join(dir, file), `${file}\n`)
    if (runner.user === 'nobody') chownSync(dir, 65534, 65534)
    if (runner.user === 'nobody') chownSync(join(dir, file), 65534, 65534)
    for (const argv of [
      ['git', 'init', '-q', '-b', 'main'],
      ['git', 'add', '.'],
      ['git', ...commit, file],
      [CLI, 'init'],
    ]) {
      const ran = runAs(runner, dir, argv)
      expect(ran.status, ran.stderr).toBe(0)
    }
    return dir
  }

  for (const runner of runners) {
    it(`as ${runner.user}: a pulled repository's .git is written in place over the workspace's own, but not its config or hooks`, async () => {
      const marker = join(tempDir('fsmonitor'), 'ran')
      const author = gitRepositoryOf({ user: 'root' }, 'git-author', 'theirs.txt')
      writeFileSync(join(author, '.git', 'config'), `[core]\n\tfsmonitor = "touch ${marker}"\n`, { flag: 'a' })
      writeFileSync(join(author, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 })
      const theirs = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: author, encoding: 'utf8' }).trim()
      expect((await fpInProcess(author, 'snapshot')).code).toBe(0)
      const layoutDir = tempDir('git-layout')
      expect((await fpInProcess(author, 'push', 'HEAD', `file://${layoutDir}:v1`)).code).toBe(0)
      if (runner.user === 'nobody') runAs({ user: 'root' }, layoutDir, ['chown', '-R', 'nobody:nogroup', layoutDir])

      const home = gitRepositoryOf(runner, 'git-home', 'mine.txt')
      const ownConfig = readFileSync(join(home, '.git', 'config'), 'utf8')
      expect((await fpAs(runner.user, home, 'pull', `file://${layoutDir}:v1`, '--tag', 'theirs')).code).toBe(0)
      const checkedOut = await fpAs(runner.user, home, 'checkout', 'theirs', '--force')
      expect([checkedOut.code, checkedOut.stdout]).toEqual([0, expect.stringMatching(/held back[^\n]*\n {2}\.git\/config\n(.*\n)* {2}\.git\/hooks\/post-checkout\n/)])
      expect(runAs(runner, home, ['git', 'rev-parse', 'HEAD']).stdout.trim()).toBe(theirs)
      expect(readFileSync(join(home, '.git', 'config'), 'utf8')).toBe(ownConfig)
      expect(existsSync(join(home, '.git', 'hooks', 'post-checkout'))).toBe(false)
      runAs(runner, home, ['git', 'status'])
      expect(existsSync(marker)).toBe(false)
    })
  }

  it('an entry landing on the store in use, whatever its name, is still refused in place (exit 5), the store untouched', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const { storeDir } = await initWorkspace({ dir, store: join(dir, 'state') })
    const [{ Store }, { makeSnapshot }] = await Promise.all([import('../../src/store/Store.js'), import('../../src/objects/Snapshot.js')])
    const store = await Store.open(storeDir)
    const planted = { name: 'planted', type: 'file', mode: 0o644, size: 71, blob: await store.writeBlob(Buffer.from(`${sha256('x')}\n`)) }
    const tags = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [planted] })
    const refs = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [{ name: 'tags', type: 'dir', mode: 0o755, size: 0, tree: tags }] })
    const state = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [{ name: 'refs', type: 'dir', mode: 0o755, size: 0, tree: refs }] })
    const tree = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [{ name: 'state', type: 'dir', mode: 0o755, size: 0, tree: state }] })
    const id = await store.writeObject(makeSnapshot({ parents: [], tree, message: 'hostile' }))
    const r = await fpInProcess(dir, 'checkout', id, '--force', '--store', storeDir)
    expect([r.code, r.stderr]).toEqual([5, expect.stringMatching(/its entry state would write into a forkpoint store/)])
    expect(existsSync(join(storeDir, 'refs', 'tags', 'planted'))).toBe(false)
  })
})

describe('contents of a hostile image (diff --patch, show ID:PATH)', () => {
  it('reads no blob past the per-file cap for a patch, whatever size the tree claims for it', async () => {
    const { Store } = await import('../../src/store/Store.js')
    const { treeObject } = await import('../../src/objects/Tree.js')
    const { treeSource } = await import('../../src/world/tree/treeSource.js')
    const { collectPatch, patchSides, MAX_PATCH_FILE_BYTES } = await import('../../src/world/diff/patchSnapshots.js')
    const store = await Store.init(tempDir('hostile-patch'))
    const small = await store.writeBlob(Buffer.from('small\n'))
    // a tree that lies: it says 6 bytes for a blob past the cap
    const huge = await store.writeBlob(Buffer.alloc(MAX_PATCH_FILE_BYTES + 1, 0x61))
    const tree = async (blob: typeof small) => {
      const { bytes, digest } = treeObject([{ name: 'f.txt', type: 'file', mode: 0o644, size: 6, blob }])
      await store.writeVerified(digest, bytes)
      return digest
    }
    const [aTree, bTree] = [await tree(small), await tree(huge)]
    const sides = { store, workspace: tempDir('unused'), a: aTree, b: bTree, aTree, bTree, source: treeSource(store) }
    const { patch } = await collectPatch(patchSides(sides))
    expect(patch).toContain('Binary files a/f.txt and b/f.txt differ')
    expect(patch.length).toBeLessThan(1000)
  })
})

describe('merge rename detection is bounded', () => {
  it('an image that deletes and adds over 1,000 × 1,000 files is merged comparing none by content: only identical files pair', async () => {
    const { Store } = await import('../../src/index.js')
    const { mergeWorld } = await import('../../src/world/merge/mergeWorld.js')
    const { writeFlat } = await import('../helpers/flatTree.js')
    const store = await Store.init(tempDir('hostile-renames'))
    const N = 1001
    const text = (tag: string, i: number) => `${tag} ${i}\n`.repeat(8)
    const files = (tag: string) => Object.fromEntries(Array.from({ length: N }, (_, i) => [`${tag}/f${i}.txt`, text(tag, i)]))
    const base = await writeFlat(store, files('old'))
    const ours = await writeFlat(store, { ...files('new'), 'same/f0.txt': text('old', 0) })
    const theirs = await writeFlat(store, Object.fromEntries(Object.entries(files('old')).map(([p, t]) => [p, `${t}edited\n`])))
    const merged = await mergeWorld({ store, base, ours, theirs, labels: { ours: 'ours', base: 'base', theirs: 'theirs' } })
    expect(merged.inexactRenamesSkipped).toBe(true)
    expect(merged.renames.map((r) => `${r.from}>${r.to}`)).toEqual(['old/f0.txt>same/f0.txt'])
    expect(merged.conflicts).toHaveLength(N - 1)
  })
})

describe('foreign run ids never become paths', () => {
  const runners: Runner[] = process.getuid?.() === 0 ? [{ user: 'root' }, { user: 'nobody' }] : [{ user: 'root' }]
  /** Ids inside the rule that a path or a ref would read as something else. */
  const trickyIds = ['..', '.', '...', '..:..', '-', '.lock', 'x.lock', 'HEAD', 'refs', '_' + 'f'.repeat(64)]
  /** Ids outside the rule that name places outside `refs/runs/`. */
  const escapingIds = ['../../../escaped', '/tmp/escaped', 'a/b', '..\\x', 'x\0y']

  async function artifactText(runId: string): Promise<string> {
    const { runArtifactText } = await import('../../src/trace/core/runArtifact.js')
    const { makeRun } = await import('../trace/runFixtures.js')
    return runArtifactText(makeRun([['llm', 'plan', { runId }, 'ok']], runId))
  }

  async function ownWorkspace(runner: Runner): Promise<string> {
    const dir = tempDir('foreign-run-ids')
    if (runner.user === 'nobody') chownSync(dir, 65534, 65534)
    expect((await fpAs(runner.user, dir, 'init')).code).toBe(0)
    return dir
  }

  for (const runner of runners) {
    it(`as ${runner.user}: tricky ids each get one ref file inside refs/runs/; escaping ids are refused (exit 5) and write nothing`, async () => {
      const dir = await ownWorkspace(runner)
      const refKinds = readdirSync(join(dir, '.forkpoint', 'refs'))
      for (const [i, id] of [...trickyIds, ...escapingIds].entries()) writeFileSync(join(dir, `r${i}.run.json`), await artifactText(id))
      if (runner.user === 'nobody') for (const name of readdirSync(dir)) chownSync(join(dir, name), 65534, 65534)
      for (const [i, id] of trickyIds.entries()) {
        const ran = await fpAs(runner.user, dir, 'snapshot', '--trace', `r${i}.run.json`)
        expect([id, ran.code, ran.stderr]).toEqual([id, 0, expect.any(String)])
      }
      for (const [j, id] of escapingIds.entries()) {
        const ran = await fpAs(runner.user, dir, 'snapshot', '--trace', `r${trickyIds.length + j}.run.json`)
        expect([id, ran.code, ran.stderr]).toEqual([id, 5, expect.stringMatching(/runId .* is not a run id/)])
      }
      const refs = join(dir, '.forkpoint', 'refs', 'runs')
      const names = readdirSync(refs, { withFileTypes: true })
      expect(names.every((e) => e.isFile())).toBe(true)
      expect(names).toHaveLength(trickyIds.length)
      expect(readdirSync(join(dir, '.forkpoint', 'refs')).sort()).toEqual([...refKinds, 'runs'].sort())
      // refs/runs/../../../escaped is the workspace's own directory
      expect([existsSync(join(dir, 'escaped')), existsSync('/tmp/escaped')]).toEqual([false, false])
      const listed = JSON.parse((await fpAs(runner.user, dir, 'runs', '--json', '-n', '100')).stdout) as { runs: Array<{ runId: string }> }
      expect(listed.runs.map((r) => r.runId).sort()).toEqual([...trickyIds].sort())
    })
  }
})

describe('effects ledgers and outboxes edited in the store: refused before anything moves, and by verify', () => {
  const mail = useCountingServer()
  type User = 'root' | 'nobody'
  const giveTo = (user: User, path: string) => user === 'nobody' && execFileSync('chown', ['-R', '65534:65534', path])

  /** A workspace (owned by `user`) with branch `b`: the agent wrote new.txt and POSTed one email, deferred in b's outbox. */
  async function branchWithOutbox(user: User): Promise<string> {
    const dir = await makeWorkspace({ 'notes.txt': 'hello\n' })
    giveTo(user, dir)
    expect((await fpAs(user, dir, 'init')).code).toBe(0)
    writeFileSync(join(dir, '.forkpoint', 'effects.json'), JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
    giveTo(user, join(dir, '.forkpoint', 'effects.json'))
    expect((await fpAs(user, dir, 'branch', 'b')).code).toBe(0)
    const agent = `echo new > new.txt && curl -s -o /dev/null -X POST -d hello ${mail.url('/send')}`
    expect((await fpAs(user, dir, 'run', '--branch', 'b', '--net', 'host', '--', 'sh', '-c', agent)).code).toBe(0)
    return dir
  }

  /** Re-store the ledger `ref` holds, changed by `edit`, and point the ref at it: an edit as someone with write access to the store would make it. */
  function editLedger(user: User, dir: string, ref: string, edit: (entries: Array<Record<string, unknown>>) => void): void {
    const objects = join(dir, '.forkpoint', 'objects', 'sha256')
    const file = (digest: string) => join(objects, digest.slice(7, 9), digest.slice(9))
    const ledger = JSON.parse(readFileSync(file(readFileSync(join(dir, '.forkpoint', ref), 'utf8').trim()), 'utf8')) as { entries: Array<Record<string, unknown>> }
    edit(ledger.entries)
    const bytes = canonicalBytes(ledger)
    const edited = sha256(bytes)
    mkdirSync(dirname(file(edited)), { recursive: true })
    writeFileSync(file(edited), bytes)
    writeFileSync(join(dir, '.forkpoint', ref), `${edited}\n`)
    giveTo(user, join(dir, '.forkpoint'))
  }

  const outboxRef = (dir: string) => `refs/effects/branches/${readdirSync(join(dir, '.forkpoint', 'refs', 'effects', 'branches'))[0]}`

  for (const user of ['root', 'nobody'] as const) {
    it(`refuses an edited outbox (exit 5) before any file of its branch is applied, and the branch can still be aborted (${user})`, async () => {
      const dir = await branchWithOutbox(user)
      const ref = outboxRef(dir)
      editLedger(user, dir, ref, (entries) => (entries[0]!['idempotencyKey'] = 'hijacked'))

      const commit = await fpAs(user, dir, 'commit', 'b')
      expect([commit.code, commit.stderr]).toEqual([5, expect.stringMatching(/^forkpoint: effects ledger ledger sha256:[0-9a-f]{64} is tampered: /)])
      expect(existsSync(join(dir, 'new.txt'))).toBe(false)
      expect(mail.received).toEqual([])
      expect((await fpAs(user, dir, 'branch', '--json')).stdout).toContain('"name": "b"')

      const verify = await fpAs(user, dir, 'verify')
      expect([verify.code, verify.stdout, verify.stderr]).toEqual([5, expect.stringContaining(`held by ${ref}): head`), expect.stringContaining(ref)])

      const abort = await fpAs(user, dir, 'abort', 'b')
      expect([abort.code, abort.stdout]).toEqual([0, expect.stringMatching(/^aborted b\nwarning: .*is tampered.*: discarded unsent\n$/)])
      expect(mail.received).toEqual([])
      expect(existsSync(join(dir, '.forkpoint', ref))).toBe(false)
      expect((await fpAs(user, dir, 'verify')).code).toBe(0)
    })

    it(`verify exits 5 naming refs/effects/workspace when its ledger was edited, truncated or reordered and re-stored (${user})`, async () => {
      const dir = await branchWithOutbox(user)
      expect((await fpAs(user, dir, 'commit', 'b')).code).toBe(0)
      expect(mail.received).toHaveLength(1)
      expect((await fpAs(user, dir, 'verify')).code).toBe(0)
      const edits: Record<string, (entries: Array<Record<string, unknown>>) => void> = {
        edited: (entries) => (entries[2]!['status'] = 'dropped'),
        truncated: (entries) => void entries.pop(),
        reordered: (entries) => entries.reverse(),
      }
      const whole = readFileSync(join(dir, '.forkpoint', 'refs', 'effects', 'workspace'), 'utf8')
      for (const [what, edit] of Object.entries(edits)) {
        editLedger(user, dir, 'refs/effects/workspace', edit)
        const verify = await fpAs(user, dir, 'verify')
        expect([what, verify.code, verify.stderr]).toEqual([what, 5, expect.stringContaining('refs/effects/workspace')])
        expect([what, (await fpAs(user, dir, 'effects')).code]).toEqual([what, 5])
        writeFileSync(join(dir, '.forkpoint', 'refs', 'effects', 'workspace'), whole)
      }
      expect((await fpAs(user, dir, 'verify')).code).toBe(0)
    })
  }
})

describe('machine cp: a file out of an untrusted guest', () => {
  // imported here so this block stays self-contained (a machine build also sets the kernel cache)
  const machines = () => import('../helpers/machines.js')
  const api = () => import('../../src/index.js')
  // the run's busybox image: this block's subject is the copy out of a guest, not the build
  const busybox = async (workspace: string) => (await import('../helpers/sharedMachineImages.js')).sharedMachineImage(workspace, 'busybox')
  let dir: string | undefined
  let machine: string
  const TIMEOUT = 240_000

  beforeAll(async () => {
    const { machineWorkspace } = await machines()
    const { bootMachine } = await api()
    dir = await machineWorkspace('hostile-machine-cp')
    machine = (await bootMachine({ dir, image: await busybox(dir) })).id
  }, TIMEOUT)

  afterAll(async () => {
    if (dir) await (await machines()).killAllMachines(dir)
  }, TIMEOUT)

  const guest = async (command: string) => {
    const r = await (await api()).execMachine({ dir: dir!, machine, command })
    expect([r.exitCode, r.stderr]).toEqual([0, ''])
  }
  const copyOut = async (source: string, target: string, maxBytes?: number) =>
    (await api()).copyFromMachine({ dir: dir!, machine, source, target, ...(maxBytes === undefined ? {} : { maxBytes }) }).then(
      () => null,
      (err: unknown) => err as { exitCode: number; message: string },
    )

  /** Copy `source` out with a cap of 1000 bytes into a fresh folder: refused (exit 5), and the folder left empty. */
  const expectRefusedOverCap = async (source: string) => {
    const out = tempDir('hostile-cp-cap')
    const err = await copyOut(source, join(out, 'copy'), 1000)
    expect([err?.exitCode, err?.message]).toEqual([5, expect.stringMatching(/over 1000 bytes/)])
    expect(readdirSync(out)).toEqual([])
  }

  it('refuses a guest file over the cap (exit 5) and leaves nothing at the target or beside it', { timeout: TIMEOUT }, async () => {
    await guest('head -c 5000 /dev/urandom > /tmp/big')
    await expectRefusedOverCap('/tmp/big')
  })

  it('refuses a guest that says its file is small and sends more than the cap (exit 5), leaving nothing', { timeout: TIMEOUT }, async () => {
    // the guest's own stat made to lie: it says 10 bytes, the file holds 5000
    await guest('head -c 5000 /dev/urandom > /tmp/liar && rm /bin/stat && printf \'#!/bin/sh\\necho "10 644"\\n\' > /bin/stat && chmod 755 /bin/stat')
    await expectRefusedOverCap('/tmp/liar')
    await guest('rm /bin/stat && ln -s busybox /bin/stat')
  })

  it('replaces a symlink at the host target with the file, never writing where it points', { timeout: TIMEOUT }, async () => {
    await guest("printf 'from the guest' > /tmp/small")
    const out = tempDir('hostile-cp-symlink')
    const elsewhere = join(tempDir('hostile-cp-elsewhere'), 'precious')
    writeFileSync(elsewhere, 'kept')
    symlinkSync(elsewhere, join(out, 'target'))
    expect(await copyOut('/tmp/small', join(out, 'target'))).toBe(null)
    expect(readFileSync(elsewhere, 'utf8')).toBe('kept')
    expect((await fs.lstat(join(out, 'target'))).isSymbolicLink()).toBe(false)
    expect(readFileSync(join(out, 'target'), 'utf8')).toBe('from the guest')
    expect(readdirSync(out)).toEqual(['target'])
  })

  it.runIf(process.getuid?.() === 0)('as nobody: the same refusals through the CLI, in a store and folder nobody owns', { timeout: TIMEOUT * 2 }, async () => {
    const { KERNEL_CACHE } = await machines()
    const nobody: Runner = { user: 'nobody' }
    const home = tempDir('hostile-cp-nobody')
    chownSync(home, 65534, 65534)
    const fpNobody = (...args: string[]) => forkpoint(nobody, home, ...args)
    const json = <T>(...args: string[]): T => {
      const ran = runAs(nobody, home, [CLI, ...args, '--json'], { XDG_CACHE_HOME: KERNEL_CACHE })
      expect([args.join(' '), ran.status, ran.stderr]).toEqual([args.join(' '), 0, ran.stderr])
      return JSON.parse(ran.stdout) as T
    }
    expect(fpNobody('init').status).toBe(0)
    allowStoreDirectories([join(home, '.forkpoint')]) // nobody's store, given the run's image by root
    const image = await busybox(home).finally(() => allowStoreDirectories([]))
    execFileSync('chown', ['-R', '65534:65534', home]) // the image's objects, copied in by root
    const { id } = json<{ id: string }>('machine', 'start', image)
    try {
      json('machine', 'exec', id, "head -c 5000 /dev/urandom > /tmp/big && printf 'from the guest' > /tmp/small")
      const elsewhere = join(tempDir('hostile-cp-nobody-elsewhere'), 'precious')
      writeFileSync(elsewhere, 'kept')
      chmodSync(elsewhere, 0o666) // writable by nobody: only not following the link keeps it
      symlinkSync(elsewhere, join(home, 'target'))
      json('machine', 'cp', `${id}:/tmp/small`, join(home, 'target'))
      expect(readFileSync(elsewhere, 'utf8')).toBe('kept')
      expect((await fs.lstat(join(home, 'target'))).isSymbolicLink()).toBe(false)
      expect(readFileSync(join(home, 'target'), 'utf8')).toBe('from the guest')
      const over = fpNobody('machine', 'cp', '--max-bytes', '1000', `${id}:/tmp/big`, join(home, 'big'))
      expect([over.status, over.stderr]).toEqual([5, expect.stringMatching(/over 1000 bytes/)])
      expect(readdirSync(home).filter((name) => name.includes('big'))).toEqual([])
    } finally {
      fpNobody('machine', 'kill', id)
    }
  })
})

describe("a store's own packs from elsewhere (a cloned repository's .forkpoint/)", () => {
  const PEAK_RSS_BYTES = 300 * 1024 * 1024

  /** Read one object of the store at `storeDir` in a process of its own: the exit code its error carries, its message and the peak RSS. */
  async function readInChild(storeDir: string, digest: string): Promise<{ exitCode: number; message: string; peakRssBytes: number }> {
    const script = join(tempDir('pack-reader'), 'read.mts')
    const lib = fileURLToPath(new URL('../../src/index.js', import.meta.url))
    await fs.writeFile(
      script,
      `import { Store } from ${JSON.stringify(lib)}
let exitCode = 0
let message = ''
try {
  await (await Store.open(process.argv[2])).readBlob(process.argv[3])
} catch (err) {
  exitCode = err.exitCode ?? 6
  message = err.message
}
process.stdout.write(JSON.stringify({ exitCode, message, peakRssBytes: process.resourceUsage().maxRSS * 1024 }) + '\\n')
`,
    )
    const r = await runProgram([process.execPath, '--import', 'tsx', script, storeDir, digest], { cwd: fileURLToPath(new URL('../..', import.meta.url)) })
    const line = r.stdout.trim().split('\n').pop() ?? ''
    if (!line.startsWith('{')) throw new Error(`the reader exited ${r.code} without a report:\n${r.stdout}\n${r.stderr}`)
    return JSON.parse(line) as { exitCode: number; message: string; peakRssBytes: number }
  }

  it('a kept frame of 4 GiB of zeros whose index declares 3.5 KB: a read is refused (exit 5) with peak RSS under 300 MB', async () => {
    const { store } = await storeWorkspace()
    const declared = Buffer.alloc(3584)
    const frame = zeroFrame(Buffer.alloc(0), FOUR_GIB_OF_ZEROS)
    const pack = sha256(frame)
    const index = packIndexBytes({
      kind: 'pack-index',
      schemaVersion: 1,
      pack,
      packSize: frame.length,
      frames: [[frame.length, declared.length]],
      objects: [[sha256(declared), 0, declared.length]],
    })
    await fs.mkdir(store.packs.dir, { recursive: true })
    await fs.writeFile(LocalPacks.packFile(store.packs.dir, pack), frame)
    await fs.writeFile(LocalPacks.indexFile(store.packs.dir, pack), index)
    const result = await readInChild(store.root, sha256(declared))
    expect(result.exitCode, result.message).toBe(5)
    expect(result.peakRssBytes).toBeLessThan(PEAK_RSS_BYTES)
    expect(result.message).toMatch(/is damaged at frame 0/)
  })
})

describe('a machine image from elsewhere: its command line is data', () => {
  it('refuses one whose command line holds NUL (exit 5) before a machine is made, not a crash when QEMU is started (exit 6)', async () => {
    const { dir, store } = await storeWorkspace({})
    const image = await store.writeObject({
      kind: 'machine-image',
      schemaVersion: 1,
      recipe: 'busybox',
      kernelRelease: '6.1.0',
      kernel: await store.writeBlob(Buffer.from('not a kernel')),
      initrd: await store.writeBlob(Buffer.from('not an initramfs')),
      cmdline: 'console=ttyS0\u0000init=/bin/sh',
    })
    const r = await fpInProcess(dir, 'machine', 'start', image, '--accel', 'tcg')
    expect(r.stderr).toMatch(/machine image .* is not a valid machine image: "cmdline": it holds a NUL/)
    expect(r.code).toBe(5)
    const machines = join(dir, '.forkpoint', 'machines')
    expect(existsSync(machines) ? readdirSync(machines).filter((n) => /^m[0-9a-f]{8}$/.test(n)) : []).toEqual([])
  })
})

describe.runIf(process.getuid?.() === 0)("a Claude Code hook's request to the store's service: the files, directories and sizes it names", () => {
  const { children } = useServices()

  for (const user of ['root', 'nobody'] as const) {
    it(`as ${user}: no recording's files or fork's branch, no directory outside the workspace, nothing over the size a hook reads`, async () => {
      const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
      const outside = tempDir('hook-outside')
      writeFileSync(join(outside, 'secret.txt'), 'outside\n')
      const bodies = tempDir('hook-bodies')
      for (const d of [outside, bodies]) chmodSync(d, 0o1777)
      if (user === 'nobody') giveToNobody(dir)
      const socket = await serveAs(user, dir, children)
      let n = 0
      const send = (body: string) => {
        const file = join(bodies, `body-${++n}`)
        writeFileSync(file, body, { mode: 0o644 })
        return postHookAs(user, socket, file)
      }
      const event = (extra: object = {}) => ({
        hook_event_name: 'PostToolUse',
        session_id: 'h',
        cwd: dir,
        tool_name: 'Write',
        tool_input: {},
        tool_response: 'ok',
        tool_use_id: 't1',
        ...extra,
      })
      const journal = join(outside, 'journal.ndjson')
      expect(await send(JSON.stringify({ env: { FORKPOINT_TRACE_JOURNAL: journal }, event: event() }))).toMatch(/^400 .*FORKPOINT_TRACE_JOURNAL/)
      expect(await send(JSON.stringify({ env: { FORKPOINT_TRACE_REPLAY: join(outside, 'secret.txt') }, event: event() }))).toMatch(/^400 .*FORKPOINT_TRACE_REPLAY/)
      expect(await send(JSON.stringify({ env: { FORKPOINT_CLAUDE_BRANCH: 'fork-1-0' }, event: event() }))).toMatch(/^400 .*FORKPOINT_CLAUDE_BRANCH/)
      expect(await send(JSON.stringify({ env: { A: { not: 'a string' } }, event: event() }))).toMatch(/^400 /)
      // a directory elsewhere is not this service's to answer for: the client then runs the hook itself, there
      expect(await send(JSON.stringify({ env: {}, event: event({ cwd: outside }) }))).toMatch(/^421 /)
      expect(await send(JSON.stringify({ env: {}, event: event({ cwd: join(dir, '..', basename(outside)) }) }))).toMatch(/^421 /)
      expect(await send(JSON.stringify({ env: {}, event: event({ cwd: '.' }) }))).toMatch(/^421 /)
      // over what a hook reads (its input and an environment): refused before it is parsed
      expect(await send(JSON.stringify({ env: {}, event: event({ tool_response: 'x'.repeat(MAX_HOOK_REQUEST) }) }))).not.toMatch(/^200 /)
      // nested past any recursive walk: an answer, not a service gone
      expect(await send(`{"env":{},"event":${JSON.stringify(event()).replace('"tool_input":{}', `"tool_input":${'['.repeat(200_000)}${']'.repeat(200_000)}`)}}`)).toMatch(/^\d{3} /)
      expect(existsSync(journal)).toBe(false)
      expect(readdirSync(outside)).toEqual(['secret.txt'])
      // none of them recorded a step: the session's first run holds only the call sent as the client sends it
      expect(await send(JSON.stringify({ env: {}, event: event({ tool_use_id: 'fine' }) }))).toMatch(/^200 /)
      expect(await send(JSON.stringify({ env: {}, event: { hook_event_name: 'Stop', session_id: 'h', cwd: dir } }))).toMatch(/^200 .*"run":"/)
      const runs = await runAsUser(user, [CLI, 'runs', '--json'], { cwd: dir })
      const [run] = (JSON.parse(runs.stdout) as { runs: Array<{ runId: string; steps: number }> }).runs
      expect(run?.steps).toBe(1)
    })
  }
})

describe('a run artifact of millions of malformed steps', () => {
  it('is refused naming its first bad step (exit 5) by a process held to 1 GiB of heap, not listing every bad step until memory runs out', async () => {
    const dir = tempDir('artifact-many-steps')
    const steps = 3_000_000
    const envelope =
      '"kind":"run","schemaVersion":1,"runId":"run-00000000000000000000","entrypoint":"e","startedAt":"s","endedAt":"e","status":"ok","redaction":"secrets","meta":{}'
    writeFileSync(join(dir, 'many.run.json'), `{${envelope},"steps":[${'0,'.repeat(steps - 1)}0]}`)
    const res = await runCli(['ci', 'replay', '--artifact', 'many.run.json'], { cwd: dir, env: { NODE_OPTIONS: '--max-old-space-size=1024' } })
    expect(res.code, res.stderr.slice(0, 500)).toBe(5)
    expect(res.stderr).toMatch(/many\.run\.json is not a valid run: step 0 is not an object\n$/)
  })
})
