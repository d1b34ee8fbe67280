import { InvalidImageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { objectEdges } from '../../objects/kinds.js'
import { snapshotParents } from '../../objects/Snapshot.js'
import { assertLayerKinds } from '../../world/tree/layerKinds.js'
import { type LinkLookup, treeLookup } from '../../world/checkout/treeLinks.js'
import { assertLinkInside } from '../../world/checkout/admitTree.js'
import { admitCheckoutCost } from '../../world/checkout/checkoutCost.js'
import type { Limits } from '../pack/limits.js'
import { validateSnapshot } from '../../objects/Snapshot.js'
import { type Chunks, validateChunks } from '../../objects/Chunks.js'
import { type Tree, validateTree } from '../../objects/Tree.js'
import { joinPath } from '../../world/tree/treeSource.js'
import type { StructuredObject } from '../../objects/StructuredObject.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import type { Described } from './Staging.js'

export interface CheckImageArgs {
  root: Digest
  /** An object as the check needs it (staged or already in the store), or null when it is nowhere. */
  describe: (digest: Digest) => Described | null
  allowExternalSymlinks?: boolean
  /** Snapshots of a shallow image: their parents may be absent. */
  shallow?: ReadonlySet<Digest>
  /** Snapshots the store holds without their parents, which this image brings: walked as if staged. */
  deepen?: ReadonlySet<Digest>
  /** The budget the image's checkout must keep to (`admitCheckoutCost`). */
  limits: Limits
}

export interface CheckedImage {
  /** The objects children-first: the safe order to commit them. */
  order: Digest[]
  /** Every object of the image with its size, when all of them were staged (none taken from the store unwalked); else null. */
  whole: BlobRef[] | null
}

/**
 * Check an untrusted image before any of it becomes visible: every object reachable
 * from the root is present (staged or local; local objects were checked when they came
 * and are not walked again), staged snapshots, trees and chunk lists are
 * well-formed, entries point at objects of the right kind and size, its world's checkout
 * within the budget (bytes, paths, expansion, depth) and no symlink leaves the tree.
 * Every object is visited once, however many paths share it.
 */
export async function checkImage({ root, describe, allowExternalSymlinks = false, shallow = new Set(), deepen = new Set(), limits }: CheckImageArgs): Promise<CheckedImage> {
  const found = new Map<Digest, Described>()
  const order: Digest[] = []
  // objects already in the store were checked when they arrived, and so was what they reach (but the history a shallow store lacks)
  const walked = (digest: Digest, item: Described) => item.object !== null && (item.staged || deepen.has(digest))
  const rootItem = describe(root)
  if (rootItem === null) throw new InvalidImageError(`object ${root} (named by root) is neither in the image nor in the local store`, { digest: root, from: 'root' })
  found.set(root, rootItem)
  // depth first, each object described once, when first named; an object joins `order` after all it names (a blob at once)
  const pending: Digest[] = [root]
  const expanded: boolean[] = [false]
  while (pending.length > 0) {
    const digest = pending[pending.length - 1]!
    if (expanded[expanded.length - 1]) {
      pending.pop()
      expanded.pop()
      order.push(digest)
      continue
    }
    expanded[expanded.length - 1] = true
    const parent = found.get(digest)!
    if (!walked(digest, parent)) continue
    const optional = shallow.has(digest) ? snapshotParents(parent.object!) : null
    for (const child of objectEdges(parent.object!)) {
      if (found.has(child)) continue
      const item = describe(child)
      if (item === null && optional?.has(child)) continue // a parent a shallow image leaves out
      if (item === null) throw new InvalidImageError(`object ${child} (named by ${digest}) is neither in the image nor in the local store`, { digest: child, from: digest })
      found.set(child, item)
      if (walked(child, item)) {
        pending.push(child)
        expanded.push(false)
      } else order.push(child)
    }
  }
  validateKinds(root, found)
  for (const cut of shallow) {
    if (found.get(cut)?.object?.kind !== 'snapshot')
      throw new InvalidImageError(`the image names ${cut} as a snapshot it cut from its history, but ${cut} is not a snapshot of the image`, { digest: cut })
  }
  for (const [digest, { object, staged }] of found) {
    if (staged && object?.kind === 'snapshot')
      await assertLayerKinds(validateSnapshot(object, `snapshot ${digest}`), `snapshot ${digest}`, (d) => (found.has(d) ? (found.get(d)!.object?.kind ?? 'blob') : null))
  }
  const rootObject = found.get(root)!.object
  if (rootObject?.kind === 'snapshot') {
    const world = validateSnapshot(rootObject, `snapshot ${root}`).world.tree
    const trees = treeReader(found, describe)
    await admitCheckoutCost({ tree: trees, chunks: chunksReader(found, describe) }, world, limits, `the world of snapshot ${root}`)
    if (!allowExternalSymlinks) await checkSymlinks(world, found, treeLookup(trees, world))
  }
  const whole = [...found.values()].every((item) => item.staged) ? [...found].map(([digest, { size }]) => ({ digest, size })) : null
  return { order, whole }
}

/** `where` names the referrer, made only when it fails (a big image's trees have 100k entries). */
function expectKind(found: Map<Digest, Described>, digest: Digest, kind: string, where: () => string): StructuredObject {
  const object = found.get(digest)?.object
  if (object?.kind !== kind) throw new InvalidImageError(`${where()} names ${digest} as a ${kind}, but it is ${object ? `a ${object.kind}` : 'a blob'}`)
  return object
}

/** Every snapshot, tree and chunk list well-formed and pointing at objects of the right kind and size. */
function validateKinds(root: Digest, found: Map<Digest, Described>): void {
  if (!found.get(root)?.object) throw new InvalidImageError(`image root ${root} is not a structured object`)
  for (const [digest, { object, staged }] of found) {
    if (!staged) continue
    if (object?.kind === 'snapshot') expectKind(found, validateSnapshot(object, `snapshot ${digest}`).world.tree, 'tree', () => `snapshot ${digest}`)
    if (object?.kind === 'chunks') {
      for (const part of validateChunks(object, `chunks ${digest}`).chunks) {
        if (found.get(part.blob)?.size !== part.size) throw new InvalidImageError(`chunks ${digest}: chunk ${part.blob} is not ${part.size} bytes`)
      }
    }
    if (object?.kind !== 'tree') continue
    for (const entry of validateTree(object, `tree ${digest}`).entries) {
      const where = () => `tree ${digest} entry ${JSON.stringify(entry.name)}`
      if (entry.type === 'dir') expectKind(found, entry.tree, 'tree', where)
      else if (entry.type === 'file' && 'chunks' in entry) {
        const chunks = validateChunks(expectKind(found, entry.chunks, 'chunks', where), where())
        if (chunks.size !== entry.size) throw new InvalidImageError(`${where()}: size does not match its chunks`)
      } else if (entry.type === 'file' && found.get(entry.blob)?.size !== entry.size) {
        throw new InvalidImageError(`${where()}: blob ${entry.blob} is not ${entry.size} bytes`)
      }
    }
  }
}

/** Trees of the image as found while checking it, and from the local store past that. */
function treeReader(found: Map<Digest, Described>, describe: CheckImageArgs['describe']): (digest: Digest) => Promise<Tree> {
  return async (digest) => {
    const object = found.get(digest)?.object ?? describe(digest)?.object
    if (object?.kind !== 'tree') throw new InvalidImageError(`tree ${digest} is neither in the image nor in the local store`, { digest })
    return validateTree(object, `tree ${digest}`)
  }
}

/** Chunk lists of the image as found while checking it, and from the local store past that. */
function chunksReader(found: Map<Digest, Described>, describe: CheckImageArgs['describe']): (digest: Digest) => Promise<Chunks> {
  return async (digest) => validateChunks(found.get(digest)?.object ?? describe(digest)?.object, `chunks ${digest}`)
}

/**
 * No symlink may lead outside the tree: absolute, climbing above its root, or doing so
 * through the tree's own links (`a -> .` then `c -> a/a/../../etc`), resolved as the kernel
 * would walk it (`resolveLink`). A link resolves by its path, so each path holding one is
 * walked; a subtree without links (looked at once, however many paths share it) is not.
 * The paths are as many as the checkout budget allowed (`admitCheckoutCost` came first).
 */
async function checkSymlinks(root: Digest, found: Map<Digest, Described>, links: LinkLookup): Promise<void> {
  const hasLinks = linkFinder(found)
  const walk = async (treeId: Digest, prefix: string): Promise<void> => {
    if (!hasLinks(treeId)) return
    for (const entry of (found.get(treeId)!.object as unknown as Tree).entries) {
      if (entry.type === 'dir') await walk(entry.tree, joinPath(prefix, entry.name))
      else if (entry.type === 'symlink') await assertLinkInside(links, [...(prefix ? prefix.split('/') : []), entry.name], entry.target)
    }
  }
  await walk(root, '')
}

/** Whether a staged tree holds a symlink at any depth, each tree looked at once; a tree from the store does not count (checkout checks symlinks again as it writes). */
function linkFinder(found: Map<Digest, Described>): (tree: Digest) => boolean {
  const known = new Map<Digest, boolean>()
  const hasLinks = (tree: Digest): boolean => {
    let answer = known.get(tree)
    if (answer !== undefined) return answer
    const item = found.get(tree)
    answer = item?.staged === true && (item.object as unknown as Tree).entries.some((e) => e.type === 'symlink' || (e.type === 'dir' && hasLinks(e.tree)))
    known.set(tree, answer)
    return answer
  }
  return hasLinks
}
