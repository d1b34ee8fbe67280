import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { diffRuns, RunArtifactError } from '../../src/index.js'
import { parseRun } from '../../src/trace/core/parseRun.js'
import { runArtifactText } from '../../src/trace/core/runArtifact.js'
import { tempDir } from '../helpers/tmp.js'
import { fp } from './cli.js'
import { makeRun } from './runFixtures.js'

const good = () => JSON.parse(runArtifactText(makeRun([['llm', 'plan', { q: 1 }, 'ok']]))) as Record<string, any>

const malformed: Array<[string, string | ((r: Record<string, any>) => unknown), RegExp]> = [
  ['not JSON', '{"kind": "run", ', /is not valid JSON/],
  ['not an object', '[1, 2]', /expected a JSON object/],
  ['wrong kind', (r) => ({ ...r, kind: 'snapshot' }), /kind is "snapshot", expected "run"/],
  ['newer schema', (r) => ({ ...r, schemaVersion: 99 }), /schemaVersion 99 is newer/],
  ['steps not an array', (r) => ({ ...r, steps: {} }), /steps must be an array/],
  ['bad step type', (r) => ({ ...r, steps: [{ ...r.steps[0], type: 'magic' }] }), /step 0 type "magic" is not one of/],
  ['idx out of order', (r) => ({ ...r, steps: [{ ...r.steps[0], idx: 3 }] }), /step 0 has idx 3/],
  ['missing output', (r) => ({ ...r, steps: [{ ...r.steps[0], output: undefined }] }), /step 0 needs input and output/],
  ['bad status', (r) => ({ ...r, status: 'great' }), /status must be one of/],
  ['bad error', (r) => ({ ...r, steps: [{ ...r.steps[0], error: 42 }] }), /step 0 error must be/],
  ['plaintext in an encrypted run', (r) => ({ ...r, redaction: 'encrypt', encryption: { alg: 'aes-256-gcm', kdf: 'raw', keyCheck: 'x' } }), /holds unencrypted payloads/],
  ['an encrypted run without its key check', (r) => ({ ...sealed(r), encryption: { alg: 'aes-256-gcm' } }), /an encrypted run needs encryption\.keyCheck/],
  [
    'an encrypted step without its hashes',
    (r) => ({ ...sealed(r), steps: [{ ...sealed(r).steps[0], outputHash: undefined }] }),
    /step 0 of an encrypted run needs inputHash and outputHash/,
  ],
  ['an error in the clear that is not {name, message}', (r) => ({ ...sealed(r), steps: [{ ...sealed(r).steps[0], error: 'oops' }] }), /step 0 error must be \{name, message\}/],
  ['a step that is not an object', (r) => ({ ...r, steps: [r.steps[0], [1]] }), /step 1 is not an object/],
  ['a negative duration', (r) => ({ ...r, steps: [{ ...r.steps[0], durationMs: -1 }] }), /step 0 durationMs must be a number >= 0/],
  ['meta not an object', (r) => ({ ...r, meta: [] }), /: meta must be an object/],
  ['a parent that is no run id', (r) => ({ ...r, parent: '../x' }), /parent "\.\.\/x" is not a run id/],
  [
    'idx wrong before a later step',
    (r) => ({
      ...r,
      steps: [
        { ...r.steps[0], idx: 1 },
        { ...r.steps[0], idx: 0, type: 'magic' },
      ],
    }),
    /step 0 has idx 1/,
  ],
]

/** The run as an encrypted one holds it: sealed payloads, a key check. */
function sealed(r: Record<string, any>): Record<string, any> {
  const seal = 'fpenc:v1:aXY.dGFn.ZGF0YQ'
  return { ...r, redaction: 'encrypt', encryption: { alg: 'aes-256-gcm', kdf: 'raw', keyCheck: 'k' }, steps: r.steps.map((s: object) => ({ ...s, input: seal, output: seal })) }
}

describe('run artifacts', () => {
  it.each(malformed)('rejects %s with a clear RunArtifactError (exit 5)', (_what, change, message) => {
    const text = typeof change === 'string' ? change : JSON.stringify(change(good()))
    let err: unknown
    try {
      parseRun(text, 'x.run.json')
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(RunArtifactError)
    expect((err as RunArtifactError).exitCode).toBe(5)
    expect((err as Error).message).toMatch(message)
  })

  it('reads an encrypted run as it is: sealed payloads, stored hashes, a sealed error', () => {
    const run = sealed(good())
    run.steps[0].error = run.steps[0].input
    expect(parseRun(JSON.stringify(run), 'x.run.json', { verifyHashes: true })).toEqual(run)
  })

  it('migrates schema version 0 and keeps unknown fields', () => {
    const v0 = { ...good(), schemaVersion: 0, futureField: { x: 1 } } as Record<string, any>
    delete v0.redaction
    v0.steps = v0.steps.map(({ inputHash: _i, outputHash: _o, ...s }: Record<string, unknown>) => ({ ...s, error: null, extra: 'kept' }))
    const run = parseRun(JSON.stringify(v0))
    expect(run.schemaVersion).toBe(1)
    expect(run.redaction).toBe('secrets')
    expect(run['futureField']).toEqual({ x: 1 })
    expect(run.steps[0]!['extra']).toBe('kept')
    expect(run.steps[0]!.error).toBeUndefined()
    expect(run.steps[0]!.inputHash).toBe(makeRun([['llm', 'plan', { q: 1 }, 'ok']]).steps[0]!.inputHash)
  })

  it('diffs a hand-edited artifact by its content, and schema validation flags the stale hash', () => {
    const r = good()
    r.steps[0].input = { q: 2 }
    const edited = parseRun(JSON.stringify(r))
    expect(diffRuns({ a: parseRun(JSON.stringify(good())), b: edited })).toMatchObject({ status: 'input_divergence', idxA: 0 })
    expect(() => parseRun(JSON.stringify(r), 'edited.run.json', { verifyHashes: true })).toThrow(/step 0 inputHash does not match its input/)
  })

  it('CLI: ci replay --artifact, diff and replay exit 5 naming the problem', async () => {
    const dir = tempDir('artifacts')
    writeFileSync(join(dir, 'good.run.json'), JSON.stringify(good()))
    writeFileSync(join(dir, 'bad.run.json'), JSON.stringify({ ...good(), steps: [{ ...good().steps[0], type: 'magic' }] }))
    writeFileSync(join(dir, 'torn.run.json'), '{"kind":"run","steps":[')
    const valid = await fp(['ci', 'replay', '--artifact', 'good.run.json', '--json'], { cwd: dir })
    expect(valid.code).toBe(0)
    expect(JSON.parse(valid.stdout)).toMatchObject({ steps: 1, schemaVersion: 1, replayable: true })
    for (const args of [
      ['ci', 'replay', '--artifact', 'bad.run.json'],
      ['diff', 'good.run.json', 'bad.run.json'],
      ['ci', 'diff', '--expected', 'good.run.json', '--actual', 'torn.run.json'],
    ]) {
      const res = await fp(args, { cwd: dir })
      expect(res.code, args.join(' ')).toBe(5)
      expect(res.stderr).toMatch(/^forkpoint: .*\.run\.json is not (a valid run|valid JSON)/)
    }
    const missing = await fp(['diff', 'good.run.json', 'nope.run.json'], { cwd: dir })
    expect(missing.code).toBe(2)
  })
})
