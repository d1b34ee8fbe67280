import { describe, expect, it } from 'vitest'
import * as errors from '../../src/errors/index.js'
import * as api from '../../src/index.js'

type ErrorClass = new (message: string, ...args: any[]) => api.ForkpointError<object>

/** Every concrete error class the public API exports. */
const errorClasses = (Object.entries(api) as Array<[string, unknown]>).filter(
  (entry): entry is [string, ErrorClass] => typeof entry[1] === 'function' && entry[1].prototype instanceof api.ForkpointError,
)

describe('errors', () => {
  it('the public API exports every error class of src/errors', () => {
    const fromErrors = Object.keys(errors).filter((n) => typeof (errors as Record<string, unknown>)[n] === 'function')
    for (const name of fromErrors) expect(api, name).toHaveProperty(name)
    expect(errorClasses.length).toBeGreaterThanOrEqual(15)
  })

  /** Abstract family bases (BranchError, ...) carry no exit code of their own; their subclasses do. */
  const isFamilyBase = (Cls: ErrorClass) => new Cls('probe').exitCode === undefined && errorClasses.some(([, Other]) => Other !== Cls && Other.prototype instanceof Cls)

  it('every class without an exit code is an abstract family base that others extend', () => {
    for (const [name, Cls] of errorClasses) if (new Cls('probe').exitCode === undefined) expect(isFamilyBase(Cls), name).toBe(true)
  })

  for (const [name, Cls] of errorClasses.filter(([, Cls]) => !isFamilyBase(Cls))) {
    it(`${name}: code === name, a numeric exit code from DESIGN.md, JSON with both`, () => {
      const err = new Cls('something went wrong', { path: 'x' })
      expect(err).toBeInstanceOf(Error)
      expect(err).toBeInstanceOf(api.ForkpointError)
      expect(err.name).toBe(name)
      expect(err.code).toBe(name)
      expect(typeof err.exitCode).toBe('number')
      expect(Object.values(api.ExitCode)).toContain(err.exitCode)
      expect(err.exitCode).not.toBe(api.ExitCode.ok)
      expect(api.isForkpointError(err)).toBe(true)
      expect(JSON.parse(JSON.stringify(err))).toEqual({ error: { code: name, exitCode: err.exitCode, message: 'something went wrong', data: { path: 'x' } } })
    })
  }

  it('maps each family to its exit code', () => {
    const code = (Cls: ErrorClass) => new Cls('m').exitCode
    expect(code(api.UsageError)).toBe(2)
    expect(code(api.StoreNotFoundError)).toBe(2)
    expect(code(api.ObjectNotFoundError)).toBe(2)
    expect(code(api.AmbiguousIdError)).toBe(2)
    expect(code(api.TargetNotEmptyError)).toBe(2)
    expect(code(api.DirtyWorkspaceError)).toBe(3)
    expect(code(api.MergeConflictError)).toBe(3)
    expect(code(api.LockTimeoutError)).toBe(3)
    expect(code(api.RefConflictError)).toBe(3)
    expect(code(api.DigestMismatchError)).toBe(5)
    expect(code(api.MalformedObjectError)).toBe(5)
    expect(code(api.UnsafePathError)).toBe(5)
    expect(code(api.StoreCorruptError)).toBe(5)
    expect(code(api.CorruptDataError)).toBe(5)
    expect(code(api.LedgerTamperedError)).toBe(5)
    expect(code(api.EffectKeyConflictError)).toBe(3)
    expect(code(api.EffectToolMissingError)).toBe(2)
    expect(code(api.InternalError)).toBe(6)
    expect(api.isForkpointError(new Error('plain'))).toBe(false)
  })
})
