import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { StoreCorruptError } from '../../src/errors/index.js'
import { print } from '../../src/cli/output.js'
import type { Rendering } from '../../src/operations/rendering.js'
import { pc, useColors } from '../../src/operations/text/colors.js'
import { formatOutcome } from '../../src/operations/text/outcome.js'

/** What print wrote, stream by stream, and the exit code it left. */
function capture() {
  const out = { stdout: '', stderr: '' }
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out.stdout += String(s)), true))
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((out.stderr += String(s)), true))
  return out
}

const view: Rendering<{ n: number; names: string[] }> = {
  human: (r) => `${r.n} names: ${r.names.join(', ')}`,
  notes: (r) => [`read ${r.n}`],
  warnings: (r) => r.names.filter((n) => n.startsWith('!')).map((n) => `forkpoint: odd name ${n}`),
  exit: (r) => (r.n > 1 ? 1 : 0),
}

describe('print, the one formatter', () => {
  let exitCode: typeof process.exitCode
  beforeEach(() => {
    exitCode = process.exitCode
  })
  afterEach(() => {
    vi.restoreAllMocks()
    process.exitCode = exitCode
  })

  it('--json: one document on stdout, the result with schemaVersion; warnings on stderr, notes not', () => {
    const out = capture()
    print({ json: true }, { n: 2, names: ['a', '!b'] }, view)
    vi.restoreAllMocks()
    expect(JSON.parse(out.stdout)).toEqual({ schemaVersion: 1, n: 2, names: ['a', '!b'] })
    expect(out.stderr).toBe('forkpoint: odd name !b\n')
    expect(process.exitCode).toBe(1)
  })

  it('human: the rendering on stdout with one final newline; notes and warnings on stderr', () => {
    const out = capture()
    print({}, { n: 1, names: ['!a'] }, view)
    vi.restoreAllMocks()
    expect(out.stdout).toBe('1 names: !a\n')
    expect(out.stderr).toContain('forkpoint: odd name !a\n')
    expect(out.stderr).toContain('read 1')
    expect(process.exitCode).toBe(0)
  })

  it('an empty rendering prints nothing', () => {
    const out = capture()
    print({}, { n: 0 }, { human: () => '' })
    vi.restoreAllMocks()
    expect(out.stdout).toBe('')
  })

  it('an error from the view is thrown once the result is printed (for main to report with its exit code)', () => {
    const out = capture()
    const failing: Rendering<{ ok: boolean }> = { human: () => 'checked', exit: (r) => (r.ok ? 0 : new StoreCorruptError('store has 1 bad or missing objects', { problems: 1 })) }
    expect(() => print({ json: true }, { ok: false }, failing)).toThrow(StoreCorruptError)
    vi.restoreAllMocks()
    expect(JSON.parse(out.stdout)).toEqual({ schemaVersion: 1, ok: false })
  })
})

describe("renderings' colours", () => {
  afterEach(() => useColors(false))

  it('follow the colours the edge turns on after the renderings loaded: the outcome table colours each status', () => {
    const outcome = {
      pattern: 'speculate' as const,
      committed: false,
      results: [{ index: 0, status: 'failed' as const, success: false, score: 0, branch: null, branchPath: null, durationMs: 5 }],
    }
    expect(formatOutcome(outcome)).not.toContain('\u001b[')
    useColors(true)
    expect(formatOutcome(outcome)).toContain(pc.yellow('failed'))
  })
})
