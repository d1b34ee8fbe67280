import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { CLI } from '../helpers/cli.js'

describe('forkpoint demo', () => {
  it('runs the patterns step: the passing patch is explored, committed, and the table shown', () => {
    const r = spawnSync(CLI, ['demo', '--json'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout).steps).toContain('patterns')
    expect(r.stderr).toMatch(/\*2\s+succeeded\s+1/)
    expect(r.stderr).toMatch(/✓ the only passing patch \(a \+ b\) was committed/)
  })
})
