import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/** The fuzz targets as `npm test` runs them: saved findings replayed, a fixed-seed run each, the fuzzer shown to report every kind of finding. */
describe('fuzz regressions', async () => {
  const { buildCorpus } = await import('../../fuzz/corpus.js')
  const { mutatedBytes } = await import('../../fuzz/byteMutations.js')
  const { fuzzTarget, replayInputs } = await import('../../fuzz/fuzzTarget.js')
  const { fuzzTargets, targetOfFile, TARGET_NAMES, TARGETS_MODULE } = await import('../../fuzz/fuzzTargets.js')
  const { tempDir } = await import('../helpers/tmp.js')
  const HOSTILE = fileURLToPath(new URL('../fixtures/hostile/', import.meta.url))
  const BROKEN = fileURLToPath(new URL('../helpers/brokenFuzzTargets.ts', import.meta.url))
  const GiB = 1024 ** 3
  /** A generous bound on one input: a hang is a finding, a slow machine is not. */
  const watchdog = { timeoutMs: 60_000, maxRssBytes: GiB }
  const CI_RUNS = 300
  const CI_SEED = 20261129
  let corpus: Awaited<ReturnType<typeof buildCorpus>>

  /**
   * The corpus and the targets' scratch stores in memory where there is a tmpfs: the targets judge parsers, not the
   * disk, and on a busy disk the fsyncs of the stores they unpack into took half their time.
   */
  const corpusDir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'fuzz-corpus-'))
  beforeAll(async () => {
    corpus = await buildCorpus(corpusDir)
  })
  afterAll(() => rmSync(corpusDir, { recursive: true, force: true }))

  /** The saved inputs of test/fixtures/hostile/: each `<target>-<hash>.<ext>` beside its `.json` description. */
  const regressionFiles = (): string[] => (existsSync(HOSTILE) ? readdirSync(HOSTILE).filter((f) => existsSync(join(HOSTILE, `${f}.json`))) : [])

  it('replays every saved finding through its target: each is now refused (exit 2 or 5) or taken, none misbehaves', async () => {
    const byTarget = new Map<string, string[]>()
    for (const file of regressionFiles()) {
      const target = targetOfFile(file)
      expect(target, file).toBeDefined()
      byTarget.set(target!, [...(byTarget.get(target!) ?? []), file])
    }
    for (const [target, files] of byTarget) {
      const verdicts = await replayInputs(
        target,
        files.map((f) => readFileSync(join(HOSTILE, f))),
        { module: TARGETS_MODULE, context: corpus.context, ...watchdog },
      )
      expect(Object.fromEntries(files.map((f, i) => [f, verdicts[i]]))).toEqual(Object.fromEntries(files.map((f) => [f, null])))
    }
  })

  it.each(TARGET_NAMES)(
    `fuzzes %s for ${CI_RUNS} inputs from a fixed seed: no misbehaviour`,
    async (name) => {
      const [target] = fuzzTargets(corpus, [name])
      const report = await fuzzTarget(target!, {
        module: TARGETS_MODULE,
        context: corpus.context,
        runs: CI_RUNS,
        seed: CI_SEED,
        findingsDir: tempDir('fuzz-findings'),
        ...watchdog,
      })
      expect(report.findings).toEqual([])
      expect(report.inputs).toBe(CI_RUNS)
    },
    300_000,
  )

  it('reports a stub parser that throws a TypeError, exits 6, hangs, dies or bloats as a finding, its input saved; one that refuses is clean', async () => {
    const findingsDir = tempDir('fuzz-broken')
    const stub = async (name: string): Promise<[string, string[]]> => {
      const target = { name, ext: 'bin', inputs: mutatedBytes([Buffer.from('a seed input')]) }
      const report = await fuzzTarget(target, { module: BROKEN, context: {}, runs: 100, seed: CI_SEED, findingsDir, timeoutMs: 5000, maxRssBytes: 300 * 1024 ** 2 })
      for (const f of report.findings) {
        expect(readFileSync(f.file).length).toBeGreaterThan(12)
        expect(JSON.parse(readFileSync(`${f.file}.json`, 'utf8'))).toMatchObject({ target: name, seed: CI_SEED, kind: f.kind })
      }
      return [name, report.findings.map((f) => f.kind)]
    }
    // side by side: the hang stub spends its watchdog's 5 s waiting, not computing
    const kinds = Object.fromEntries(await Promise.all(['type-error', 'exit6', 'hang', 'crash', 'bloat', 'refuses'].map(stub)))
    expect(kinds).toEqual({ 'type-error': ['threw'], exit6: ['exit6'], hang: ['hang'], crash: ['crash'], bloat: ['rss'], refuses: [] })
  })
})
