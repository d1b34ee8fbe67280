import { describe, expect, it } from 'vitest'
import { type LinkLookup, MAX_LINK_HOPS, resolveLink } from '../../src/world/checkout/treeLinks.js'

/** A root holding only the given symlinks (path -> target) and directories `dirs`. */
function root(links: Record<string, string>, dirs: string[] = []): LinkLookup {
  return async (path) => {
    const p = path.join('/')
    return p in links ? { symlink: links[p]! } : dirs.includes(p) ? 'other' : undefined
  }
}

describe('resolving a symlink through the tree’s own links', () => {
  it('follows chains: in when they end inside, out when any step climbs out', async () => {
    const links = { a: 'b', b: 'c', c: 'd/e' }
    expect(await resolveLink(root(links, ['d']), ['a'], 'b')).toBe('inside')
    expect(await resolveLink(root(links, ['d']), ['x'], 'a/../../y')).toBe('inside') // a is d/e: a/.. is d, a/../.. the root
    expect(await resolveLink(root(links, ['d']), ['x'], 'a/../../../y')).toBe('outside') // one more: out
  })

  it('climbs lexically past names the tree lacks, so a later directory cannot open a way out', async () => {
    expect(await resolveLink(root({}), ['l'], 'missing/../../etc')).toBe('outside')
    expect(await resolveLink(root({}), ['l'], 'missing/../etc')).toBe('inside')
  })

  it('gives up on loops and on chains longer than Linux follows', async () => {
    expect(await resolveLink(root({ x: 'y', y: 'x' }), ['x'], 'y')).toBe('too-many-links')
    const chain = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${i}`, i === n - 1 ? 'end' : `l${i + 1}`]))
    expect(await resolveLink(root(chain(MAX_LINK_HOPS)), ['start'], 'l0')).toBe('inside')
    expect(await resolveLink(root(chain(MAX_LINK_HOPS + 1)), ['start'], 'l0')).toBe('too-many-links')
  })

  it('starts from the link’s own directory', async () => {
    expect(await resolveLink(root({}, ['d', 'd/e']), ['d', 'e', 'l'], '../../x')).toBe('inside')
    expect(await resolveLink(root({}, ['d', 'd/e']), ['d', 'e', 'l'], '../../../x')).toBe('outside')
    expect(await resolveLink(root({}), ['l'], '/etc')).toBe('outside')
  })
})
