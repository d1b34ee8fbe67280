import { describe, expect, it } from 'vitest'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { makeTree } from '../../src/objects/Tree.js'
import { sha256 } from '../../src/objects/digest.js'
import { treeBytes } from '../../src/objects/Tree.js'

describe('treeBytes', () => {
  it('writes exactly the canonical JSON bytes of a tree, for every kind of entry and awkward names', () => {
    const tree = makeTree([
      { name: 'z-file', type: 'file', mode: 0o644, size: 3, blob: sha256('abc') },
      { name: 'big.bin', type: 'file', mode: 0o755, size: 9_000_000, chunks: sha256('chunks') },
      { name: 'sub', type: 'dir', mode: 0o755, size: 0, tree: sha256('tree') },
      { name: 'link "quoted"\n\u2028é', type: 'symlink', mode: 0o777, size: 7, target: '../x\\y"\u0001' },
      { name: 'Ünïcödé 🎉', type: 'file', mode: 0o644, size: 0, blob: sha256('') },
    ])
    expect(treeBytes(tree).toString('utf8')).toBe(canonicalBytes(tree).toString('utf8'))
  })

  it('writes the canonical form of an empty tree', () => {
    expect(treeBytes(makeTree([])).equals(canonicalBytes(makeTree([])))).toBe(true)
  })
})
