import { describe, expect, expectTypeOf, it } from 'vitest'
import { AmbiguousIdError, ConflictError, DirtyWorkspaceError, type ForkpointError, LedgerTamperedError, ReplayNotPossibleError, UsageError } from '../../src/index.js'

// Type-level: `npm run typecheck` checks these lines; the runtime checks are the same facts.
describe('error data is typed per class', () => {
  it('carries the fields its class declares, with their types', () => {
    const conflict = new ConflictError('m', { name: 'b', paths: ['a.txt'] })
    expectTypeOf(conflict.data).toEqualTypeOf<{ name: string; paths: string[]; inProgress?: boolean }>()
    expectTypeOf(new AmbiguousIdError('m', { spec: 'ab', matches: [] }).data.matches).toEqualTypeOf<string[]>()
    expectTypeOf(new LedgerTamperedError('m', { ledger: 'x', reason: 'chain' }).data.reason).toEqualTypeOf<
      'malformed' | 'chain' | 'head' | 'key' | 'unkeyed' | 'reference' | 'conflict' | 'seq' | 'prev'
    >()
    expectTypeOf(conflict.toJSON().error.data).toEqualTypeOf<{ name: string; paths: string[]; inProgress?: boolean }>()
    expectTypeOf<ForkpointError['data']>().not.toEqualTypeOf<Record<string, unknown>>()
    expect(conflict.data.paths).toEqual(['a.txt'])
  })

  it('requires the data a class needs, refuses fields it does not know, and needs none where it carries none', () => {
    // @ts-expect-error ConflictError needs the branch name and the conflicting paths
    expect(() => new ConflictError('m')).not.toThrow()
    // @ts-expect-error a field DirtyWorkspaceError does not carry
    expect(new DirtyWorkspaceError('m', { paths: [], branch: 'x' }).data.paths).toEqual([])
    // @ts-expect-error ReplayNotPossibleError carries no data
    expect(() => new ReplayNotPossibleError('m', { why: 'x' })).not.toThrow()
    expect(new ReplayNotPossibleError('m').data).toEqual({})
    expect(new UsageError('bad --limit', { option: 'limit', value: -1 }).data).toEqual({ option: 'limit', value: -1 })
  })
})
