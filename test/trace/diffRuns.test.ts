import { describe, expect, it } from 'vitest'
import { diffRuns, type DivergenceStatus } from '../../src/index.js'
import { hashPayload } from '../../src/trace/core/stepHash.js'
import { jsonDiff } from '../../src/trace/diff/jsonDiff.js'
import { makeRun, type StepSpec } from './runFixtures.js'

const base: StepSpec[] = [
  ['input', 'question', null, 'what is 2+2?'],
  ['llm', 'plan', { prompt: 'what is 2+2?' }, { text: 'use calc' }],
  ['tool', 'calc', { expr: '2+2' }, 4],
  ['llm', 'answer', { prompt: 'result 4' }, { text: 'four' }],
  ['output', 'final', null, 'four'],
]

function statusOf(b: StepSpec[], a = base): ReturnType<typeof diffRuns> {
  return diffRuns({ a: makeRun(a), b: makeRun(b, 'run-0000000000000000000b') })
}

describe('diffRuns: first divergence', () => {
  it('exact_match for identical runs', () => {
    const d = statusOf(base)
    expect(d.status).toBe('exact_match')
    expect(d.idxA).toBeNull()
    expect(d.lastEqualIdx).toBe(4)
  })

  it('input_divergence: same step name, different input, with the input diff', () => {
    const b = base.map((s, i) => (i === 2 ? (['tool', 'calc', { expr: '2*2' }, 4] as StepSpec) : s))
    const d = statusOf(b)
    expect(d).toMatchObject({ status: 'input_divergence', idxA: 2, idxB: 2, lastEqualIdx: 1, resync: { idxA: 3, idxB: 3 } })
    expect(d.inputDiff).toEqual([{ op: 'replace', path: '$.expr', old: '2+2', new: '2*2' }])
    expect(d.contextA.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4])
  })

  it('output_divergence: same name and input, different output', () => {
    const b = base.map((s, i) => (i === 3 ? (['llm', 'answer', { prompt: 'result 4' }, { text: 'FOUR!' }] as StepSpec) : s))
    const d = statusOf(b)
    expect(d).toMatchObject({ status: 'output_divergence', idxA: 3, idxB: 3, lastEqualIdx: 2 })
    expect(d.outputDiff).toEqual([{ op: 'replace', path: '$.text', old: 'four', new: 'FOUR!' }])
  })

  it('op_divergence: a different step at the same position', () => {
    const b = base.map((s, i) => (i === 2 ? (['tool', 'search', { q: '2+2' }, 'four'] as StepSpec) : s))
    expect(statusOf(b)).toMatchObject({ status: 'op_divergence', idxA: 2, idxB: 2 })
  })

  it('error_divergence: the same call fails in one run only', () => {
    const b = base.map((s, i) => (i === 2 ? (['tool', 'calc', { expr: '2+2' }, 4, 'calculator offline'] as StepSpec) : s))
    const d = statusOf(b)
    expect(d).toMatchObject({ status: 'error_divergence', idxA: 2, idxB: 2 })
    expect(d.explanation).toContain('fails in B only')
  })

  it('missing_steps when B stops early, extra_steps when B goes on', () => {
    expect(statusOf(base.slice(0, 3))).toMatchObject({ status: 'missing_steps', idxA: 3, idxB: null, lastEqualIdx: 2 })
    expect(statusOf([...base, ['tool', 'log', { line: 'done' }, null]])).toMatchObject({ status: 'extra_steps', idxA: null, idxB: 5 })
  })

  it('resyncs past steps inserted in B (extra_steps) instead of calling them changes', () => {
    const b: StepSpec[] = [...base.slice(0, 2), ['tool', 'search', { q: 'x' }, 1], ['tool', 'search', { q: 'y' }, 2], ...base.slice(2)]
    expect(statusOf(b)).toMatchObject({ status: 'extra_steps', idxA: 2, idxB: 2, resync: { idxA: 2, idxB: 4 } })
  })

  it('resyncs past steps deleted from B (missing_steps)', () => {
    const b: StepSpec[] = [...base.slice(0, 1), ...base.slice(3)]
    expect(statusOf(b)).toMatchObject({ status: 'missing_steps', idxA: 1, idxB: 1, resync: { idxA: 3, idxB: 1 } })
  })

  it('only looks as far as the window', () => {
    const inserted: StepSpec[] = Array.from({ length: 5 }, (_, i) => ['tool', 'noise', { i }, i])
    const b: StepSpec[] = [...base.slice(0, 2), ...inserted, ...base.slice(2)]
    expect(diffRuns({ a: makeRun(base), b: makeRun(b), window: 10 }).status).toBe('extra_steps')
    expect(diffRuns({ a: makeRun(base), b: makeRun(b), window: 3 }).status).toBe('op_divergence')
  })

  it('covers every status the issue names', () => {
    const seen = new Set<DivergenceStatus>()
    seen.add(statusOf(base).status)
    seen.add(statusOf(base.map((s, i) => (i === 2 ? (['tool', 'calc', { expr: '1' }, 4] as StepSpec) : s))).status)
    seen.add(statusOf(base.map((s, i) => (i === 2 ? (['tool', 'calc', { expr: '2+2' }, 5] as StepSpec) : s))).status)
    seen.add(statusOf(base.map((s, i) => (i === 2 ? (['tool', 'other', { expr: '2+2' }, 4] as StepSpec) : s))).status)
    seen.add(statusOf(base.slice(0, 4)).status)
    seen.add(statusOf([...base, ['tool', 'x', null, null]]).status)
    seen.add(statusOf(base.map((s, i) => (i === 2 ? (['tool', 'calc', { expr: '2+2' }, 4, 'boom'] as StepSpec) : s))).status)
    expect([...seen].sort()).toEqual(['error_divergence', 'exact_match', 'extra_steps', 'input_divergence', 'missing_steps', 'op_divergence', 'output_divergence'])
  })
})

describe('jsonDiff', () => {
  it('orders removals, additions, then changes, with $-paths', () => {
    const ops = jsonDiff({ a: 1, gone: true, list: [1, 2], 'odd key': 'x' }, { a: 2, list: [1, 2, 3], 'odd key': 'y', added: null })
    expect(ops).toEqual([
      { op: 'remove', path: '$.gone', value: true },
      { op: 'add', path: '$.list[2]', value: 3 },
      { op: 'add', path: '$.added', value: null },
      { op: 'replace', path: '$.a', old: 1, new: 2 },
      { op: 'replace', path: '$["odd key"]', old: 'x', new: 'y' },
    ])
  })

  it('treats true and 1 as different, -0 and 0 and NFC-equal strings as equal', () => {
    expect(jsonDiff({ v: true }, { v: 1 })).toHaveLength(1)
    expect(jsonDiff({ v: -0 }, { v: 0 })).toEqual([])
    expect(jsonDiff({ v: 'caf\u00e9' }, { v: 'cafe\u0301' })).toEqual([])
  })
})

describe('canonical form of step payloads', () => {
  it('is stable across key order, Unicode normalisation and -0, and keeps bool apart from number', () => {
    expect(hashPayload({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe(hashPayload({ a: [1, { c: 3, d: 2 }], b: 1 }))
    expect(hashPayload({ 'caf\u00e9': 'na\u00efve' })).toBe(hashPayload({ 'cafe\u0301': 'nai\u0308ve' }))
    expect(hashPayload({ x: -0 })).toBe(hashPayload({ x: 0 }))
    expect(hashPayload({ x: true })).not.toBe(hashPayload({ x: 1 }))
    expect(hashPayload({ x: '1' })).not.toBe(hashPayload({ x: 1 }))
    expect(hashPayload({ x: null })).not.toBe(hashPayload({}))
    expect(hashPayload({ x: undefined })).toBe(hashPayload({}))
    expect(hashPayload('x')).toMatch(/^[0-9a-f]{64}$/)
  })
})
