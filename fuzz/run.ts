/**
 * `npm run fuzz -- [--runs N] [--target NAME]... [--seed S] [--seconds T] [--timeout-ms MS] [--json FILE]`:
 * mutate a corpus of forkpoint's own outputs and run every parser of untrusted input on
 * the results (docs/untrusted-input.md, "Fuzzing"). A finding is written to
 * test/fixtures/hostile/ and the exit status is 1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { buildCorpus } from './corpus.js'
import { fuzzTarget, type TargetReport } from './fuzzTarget.js'
import { fuzzTargets, TARGETS_MODULE } from './fuzzTargets.js'

const GiB = 1024 ** 3
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    target: { type: 'string', multiple: true },
    seed: { type: 'string' },
    seconds: { type: 'string' },
    'timeout-ms': { type: 'string', default: '10000' },
    json: { type: 'string' },
  },
})
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed)
const work = mkdtempSync(join(tmpdir(), 'forkpoint-fuzz-'))
const findingsDir = fileURLToPath(new URL('../test/fixtures/hostile/', import.meta.url))
try {
  const corpus = await buildCorpus(work)
  const reports: TargetReport[] = []
  for (const target of fuzzTargets(corpus, values.target)) {
    const report = await fuzzTarget(target, {
      module: TARGETS_MODULE,
      context: corpus.context,
      runs: Number(values.runs),
      seed,
      ...(values.seconds ? { seconds: Number(values.seconds) } : {}),
      timeoutMs: Number(values['timeout-ms']),
      maxRssBytes: GiB,
      findingsDir,
    })
    reports.push(report)
    const rate = report.inputs / report.seconds
    console.log(
      `${report.target}: ${report.inputs} inputs (${report.accepted} accepted) in ${report.seconds.toFixed(1)} s (${rate.toFixed(0)}/s), ${report.findings.length} findings`,
    )
    for (const f of report.findings)
      console.log(`  ${f.kind}: ${f.file}\n  ${f.detail.split('\n')[0]}\n  reproduce: npm run fuzz -- --target ${f.target} --seed ${seed} --runs ${values.runs}`)
  }
  const summary = { seed, runsPerTarget: Number(values.runs), timeoutMs: Number(values['timeout-ms']), node: process.version, cpus: cpus().length, targets: reports }
  if (values.json) writeFileSync(values.json, `${JSON.stringify(summary, null, 2)}\n`)
  process.exitCode = reports.some((r) => r.findings.length > 0) ? 1 : 0
} finally {
  rmSync(work, { recursive: true, force: true })
}
