import { describe, expect, it } from 'vitest'
import { isInside } from '../../src/util/isInside.js'

describe('isInside', () => {
  it('holds a path below the root and the root itself, a name starting with `..` included', () => {
    expect(['/w', '/w/a', '/w/..hooks', '/w/a/..', '/w/...'].map((p) => isInside('/w', p))).toEqual([true, true, true, true, true])
  })

  it('leaves out the parent, a sibling and what lies beside the root', () => {
    expect(['/', '/x', '/w/../x', '/wx', '/w/../w2/a'].map((p) => isInside('/w', p))).toEqual([false, false, false, false, false])
  })
})
