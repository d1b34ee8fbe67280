/**
 * `npm run bench -- trace`: recording overhead per step (in-process SDK, journal to disk,
 * HTTP capture against bare fetch), replay of a 10,000-step run (in-process and a full
 * `forkpoint replay` of a child process), parsing a 1,000- and a 100,000-step run's bytes,
 * and diff of two 100,000-step runs diverging near the end (plus 25k/50k to show it is
 * linear), each beside its target.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cpuMs, measure, report, type Row } from './harness.js'
import { diffRuns, initWorkspace, loadRun, Recorder, recordCommand, replayRun, type Run } from '../src/index.js'
import { parseRun } from '../src/trace/core/parseRun.js'
import { runArtifactText } from '../src/trace/core/runArtifact.js'
import { createSession } from '../src/trace/record/createSession.js'
import { fileSink } from '../src/trace/record/journal.js'
import { Session } from '../src/trace/record/Session.js'
import { installHttpCapture } from '../src/trace/capture/httpCapture.js'
import { memorySink } from '../src/trace/record/journal.js'
import { hashPayload } from '../src/trace/core/stepHash.js'

const here = fileURLToPath(new URL('.', import.meta.url))

/** Median wall time and median CPU time (this process + children) of `fn`. */
async function measureWithCpu(fn: () => Promise<unknown>, runs: number): Promise<{ wall: number; cpu: number }> {
  const walls: number[] = []
  const cpus: number[] = []
  await fn()
  for (let i = 0; i < runs; i++) {
    const c0 = cpuMs()
    const t0 = performance.now()
    await fn()
    walls.push(performance.now() - t0)
    cpus.push(cpuMs() - c0)
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  return { wall: median(walls), cpu: median(cpus) }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

async function perStep(n: number, step: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    await step(i)
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) }
}

const payload = (i: number) => ({ i, query: `find the invoice for customer ${i}`, options: { limit: 10, fuzzy: true } })

async function recordingOverhead(rows: Row[]): Promise<void> {
  const n = 20_000
  const bare = await perStep(n, async (i) => payload(i).i * 2)
  const rec = await Recorder.start({ entrypoint: 'bench', save: false, env: {} })
  const sdk = await perStep(n, (i) => rec.tool('lookup', payload(i), () => i * 2))
  await rec.finish()
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-journal-'))
  const session = createSession({ policy: { mode: 'secrets' }, sink: fileSink(join(dir, 'j.ndjson')), env: {} })
  const journaled = await perStep(n, (i) => session.call({ name: 'lookup', type: 'tool', input: payload(i) }, () => i * 2))
  session.sink.close()
  rmSync(dir, { recursive: true, force: true })
  rows.push({ case: `record a step, bare function call (baseline), ${n} steps`, p50_ms: bare.p50, p99_ms: bare.p99, target: '' })
  rows.push({ case: 'record a step, SDK in-process', p50_ms: sdk.p50, p99_ms: sdk.p99, target: 'p50 < 0.2 ms' })
  rows.push({ case: 'record a step, SDK journaled to disk (under forkpoint run)', p50_ms: journaled.p50, p99_ms: journaled.p99, target: 'p50 < 0.2 ms' })

  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.end('{"ok":true}'))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/echo`
  const call = (i: number) => fetch(url, { method: 'POST', body: JSON.stringify(payload(i)), headers: { 'content-type': 'application/json' } }).then((r) => r.text())
  for (let i = 0; i < 200; i++) await call(i)
  const plain = await perStep(2000, call)
  Session.install(createSession({ policy: { mode: 'secrets' }, sink: memorySink(), env: {} }))
  const dispose = installHttpCapture()
  for (let i = 0; i < 200; i++) await call(i)
  const captured = await perStep(2000, call)
  dispose()
  Session.install(null)
  server.close()
  rows.push({ case: 'HTTP POST to 127.0.0.1, bare fetch (baseline), 2000 calls', p50_ms: plain.p50, p99_ms: plain.p99, target: '' })
  rows.push({ case: 'HTTP POST to 127.0.0.1, captured in-process', p50_ms: captured.p50, p99_ms: captured.p99, target: `overhead ${(captured.p50 - plain.p50).toFixed(2)} ms p50` })
}

async function replaySpeed(rows: Row[]): Promise<void> {
  const rec = await Recorder.start({ entrypoint: 'bench', save: false, env: {} })
  for (let i = 0; i < 10_000; i++) await rec.tool('lookup', payload(i), () => i * 2)
  const done = await rec.finish()
  if (done.kind !== 'recorded') throw new Error('unexpected')
  const run = done.run
  const inProcess = await measure(
    async () => {
      const replay = await Recorder.start({ entrypoint: 'bench', replay: run, env: {} })
      for (let i = 0; i < 10_000; i++) await replay.tool('lookup', payload(i), () => -1)
      const r = await replay.finish()
      if (r.kind !== 'recorded' || r.diff?.status !== 'exact_match') throw new Error('replay diverged')
    },
    { runs: 5 },
  )
  rows.push({ case: 'replay 10,000 steps in-process (serve + compare)', p50_ms: inProcess.median, p99_ms: Math.max(...inProcess.samples), target: '< 1000 ms' })

  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-replay-'))
  await initWorkspace({ dir })
  const agent = resolve(here, '../test/trace/fixtures/manySteps.mjs')
  const env = { ...process.env, STEPS: '10000' }
  let runId = ''
  const recordE2e = await measureWithCpu(async () => {
    runId = (await recordCommand({ dir, command: [process.execPath, agent], env, stdout: 'capture' })).runId
  }, 3)
  const stored = await loadRun({ spec: runId, dir })
  const replayE2e = await measureWithCpu(async () => {
    const r = await replayRun({ run: stored, dir, env, stdout: 'capture' })
    if (r.served !== 10_000 || r.diff.status !== 'exact_match') throw new Error(`served ${r.served}`)
  }, 3)
  rows.push({ case: 'forkpoint run --record of a 10,000-step node agent (baseline: live)', p50_ms: recordE2e.wall, p99_ms: '', target: `cpu ${recordE2e.cpu.toFixed(0)} ms` })
  rows.push({
    case: `forkpoint replay of it, offline in a network namespace (node start included)`,
    p50_ms: replayE2e.wall,
    p99_ms: '',
    target: `< 1000 ms; cpu ${replayE2e.cpu.toFixed(0)} ms`,
  })
  rmSync(dir, { recursive: true, force: true })
}

function syntheticRun(n: number, divergeAt: number, runId: string): Run {
  const steps = Array.from({ length: n }, (_, idx): Run['steps'][number] => {
    const input = { i: idx, prompt: `step ${idx}: ${idx === divergeAt ? 'changed' : 'same'} prompt` }
    const output = { text: `result ${idx}` }
    return {
      idx,
      name: idx % 3 === 0 ? 'llm chat' : 'tool search',
      type: idx % 3 === 0 ? 'llm' : 'tool',
      input,
      output,
      inputHash: hashPayload(input),
      outputHash: hashPayload(output),
      startedAt: '2025-01-01T00:00:00.000Z',
      durationMs: 1,
    }
  })
  return {
    kind: 'run',
    schemaVersion: 1,
    runId,
    entrypoint: 'bench',
    startedAt: '2025-01-01T00:00:00.000Z',
    endedAt: '2025-01-01T00:00:01.000Z',
    status: 'ok',
    redaction: 'secrets',
    meta: {},
    steps,
  }
}

/** parseRun of an artifact's bytes, as loadRun and RunStore read a stored run: JSON, the run's schema, its steps' hashes taken as stored. */
async function parseSpeed(rows: Row[]): Promise<void> {
  for (const n of [1_000, 100_000]) {
    const bytes = Buffer.from(runArtifactText(syntheticRun(n, -1, 'run-0000000000000000000a')))
    const parsed = await measure(() => parseRun(bytes), { runs: 11 })
    const json = await measure(() => JSON.parse(bytes.toString()), { runs: 11 })
    rows.push({
      case: `parse a ${n.toLocaleString('en')}-step run's bytes (${(bytes.length / 2 ** 20).toFixed(1)} MiB)`,
      p50_ms: parsed.median,
      p99_ms: Math.max(...parsed.samples),
      target: `JSON.parse alone ${json.median.toFixed(1)} ms`,
    })
  }
}

async function diffSpeed(rows: Row[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-diff-'))
  for (const n of [25_000, 50_000, 100_000]) {
    const a = syntheticRun(n, -1, 'run-0000000000000000000a')
    const b = syntheticRun(n, n - 5, 'run-0000000000000000000b')
    const fa = join(dir, `a${n}.run.json`)
    const fb = join(dir, `b${n}.run.json`)
    writeFileSync(fa, runArtifactText(a))
    writeFileSync(fb, runArtifactText(b))
    const inMemory = await measure(() => {
      const d = diffRuns({ a, b })
      if (d.status !== 'input_divergence' || d.idxA !== n - 5) throw new Error(`unexpected ${d.status}`)
    })
    const fromFiles = await measureWithCpu(async () => {
      const d = diffRuns({ a: parseRun(readFileSync(fa)), b: parseRun(readFileSync(fb)) })
      if (d.idxA !== n - 5) throw new Error('unexpected')
    }, 3)
    rows.push({
      case: `diff ${n.toLocaleString('en')}-step runs diverging 5 from the end: compare only`,
      p50_ms: inMemory.median,
      p99_ms: Math.max(...inMemory.samples),
      target: '',
    })
    rows.push({
      case: `  … from two *.run.json files (read, parse, validate, compare)`,
      p50_ms: fromFiles.wall,
      p99_ms: '',
      target: `${n === 100_000 ? '< 2000 ms; ' : ''}cpu ${fromFiles.cpu.toFixed(0)} ms`,
    })
  }
  rmSync(dir, { recursive: true, force: true })
}

export async function main(): Promise<void> {
  const rows: Row[] = []
  await recordingOverhead(rows)
  await replaySpeed(rows)
  await parseSpeed(rows)
  await diffSpeed(rows)
  report('trace', 'Trace: record, replay, diff', rows)
}
