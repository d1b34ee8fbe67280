import { describe, expect, it } from 'vitest'
import { fp } from '../helpers/cli.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { counted } from '../../src/util/plural.js'

describe('listings say when they are empty, and counts take the right number', () => {
  it('log, tag, branch, machine ls and runs on an empty store each say there is nothing', async () => {
    const dir = await makeWorkspace({})
    expect((await fp(dir, 'init')).code).toBe(0)
    for (const [args, said] of [
      [['log'], 'no snapshots yet'],
      [['log', '--graph'], 'no snapshots yet'],
      [['tag'], 'no tags'],
      [['branch'], 'no branches'],
      [['machine', 'ls'], 'no machines'],
      [['runs'], 'no recorded runs'],
    ] as const) {
      const r = await fp(dir, ...args)
      expect([r.code, r.stdout.trim()], args.join(' ')).toEqual([0, said])
    }
  })

  it('one file is "1 file", in snapshot and checkout alike', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    expect((await fp(dir, 'init')).code).toBe(0)
    const snap = await fp(dir, 'snapshot')
    expect(snap.stderr).toMatch(/^snapshot: 1 file, /m)
    const out = await fp(dir, 'checkout', 'HEAD', '--into', `${dir}-copy`)
    expect(out.stdout).toMatch(/\(1 file, /)
  })

  it('counted() picks the noun by number', () => {
    expect([counted(0, 'step'), counted(1, 'step'), counted(2, 'step'), counted(1, 'entry', 'entries'), counted(3, 'entry', 'entries')]).toEqual([
      '0 steps',
      '1 step',
      '2 steps',
      '1 entry',
      '3 entries',
    ])
  })
})
