import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const examples = readdirSync('examples').filter((f) => f.endsWith('.ts') && f !== 'workspace.ts')

describe('examples', () => {
  it('has one runnable example per pattern', () => {
    expect(examples.sort()).toEqual(['beamSearch.ts', 'bestOfN.ts', 'reflexion.ts', 'speculate.ts', 'tournament.ts', 'treeOfThoughts.ts'])
  })

  it.each(examples)('%s runs and commits its winner', (file) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', `examples/${file}`], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
    expect([r.status, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toMatch(/^committed: true -> \S/m)
  })
})
