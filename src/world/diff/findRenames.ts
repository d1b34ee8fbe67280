import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { type FileEntry, type Tree, type TreeEntry, contentDigest } from '../../objects/Tree.js'
import { looksBinary } from './looksBinary.js'
import { type Signature, sharedBytes, signatureOf, sizesCanReach } from './similarity.js'
import { EMPTY_TREE, type TreeSource, joinPath, sameEntry, zipEntries } from '../tree/treeSource.js'

/** How renames are looked for: `threshold` percent of similarity at least, and at most `limit`² pairs compared. */
export interface RenameOptions {
  threshold: number
  limit: number
}

export const DEFAULT_RENAMES: RenameOptions = { threshold: 50, limit: 1000 }

/** Files larger than this, chunked files and binary files are paired only when identical. */
export const MAX_INEXACT_RENAME_BYTES = 1024 * 1024

/** Added files looked at per side: past this many, the rest are not rename targets. */
export const MAX_RENAME_TARGETS = 100_000

/** Span entries compared in all (the sum of both signatures' lengths over every pair): past it, inexact detection stops. */
export const MAX_COMPARE_WORK = 100_000_000

/** A file one side moved: `from` (in the base) is `to` (on that side), `score` percent alike. */
export interface Rename {
  from: string
  to: string
  score: number
}

export interface FoundRenames {
  renames: Rename[]
  /** Some pairs were not compared by content (too many, or too much to compare): only identical files were paired. */
  inexactSkipped: boolean
}

type Files = Map<string, FileEntry>

/**
 * The renames of one side against the base, as git's merge finds them: sources are the
 * base's files this side no longer has *and* the other side changed (a rename of a file
 * the other side left alone merges the same without being found); targets are the files
 * this side added. Identical contents pair first (a same-named target preferred), then,
 * when sources × targets stay within `limit`², text files up to 1 MiB by similarity,
 * best scores first, each file used once.
 */
export async function findRenames({
  store,
  source,
  base,
  side,
  other,
  options,
}: {
  store: Store
  source: TreeSource
  base: Digest | null
  side: Digest
  other: Digest
  options: RenameOptions
}): Promise<FoundRenames> {
  const read = async (d: Digest | null) => (d ? source(d) : EMPTY_TREE)
  const [b, s, o] = await Promise.all([read(base), read(side), read(other)])
  const sources: Files = new Map()
  await collectSources(source, b, s, o, '', sources)
  if (sources.size === 0) return { renames: [], inexactSkipped: false }
  const targets: Files = new Map()
  const complete = await collectTargets(source, b, s, '', targets)
  const renames = pairIdentical(sources, targets)
  if (sources.size === 0 || targets.size === 0) return { renames, inexactSkipped: !complete }
  if (sources.size * targets.size > options.limit * options.limit) return { renames, inexactSkipped: true }
  const similar = await pairSimilar(store, sources, targets, options.threshold)
  return similar ? { renames: [...renames, ...similar], inexactSkipped: !complete } : { renames, inexactSkipped: true }
}

const asTree = async (source: TreeSource, e: TreeEntry | undefined): Promise<Tree> => (e?.type === 'dir' ? source(e.tree) : EMPTY_TREE)

/** The base's files that `side` no longer has as a file or symlink and `other` changed (modified, deleted, moved). */
async function collectSources(source: TreeSource, b: Tree, s: Tree, o: Tree, prefix: string, out: Files): Promise<void> {
  for (const { name, entries } of zipEntries(b, s, o)) {
    const [be, se, oe] = entries
    if (!be || sameEntry(be, se) || sameEntry(be, oe)) continue
    const path = joinPath(prefix, name)
    if (be.type === 'dir') await collectSources(source, await source(be.tree), await asTree(source, se), await asTree(source, oe), path, out)
    else if (be.type === 'file' && be.size > 0 && (!se || se.type === 'dir')) out.set(path, be)
  }
}

/** The files `side` has where the base has none; false when it stopped at MAX_RENAME_TARGETS. */
async function collectTargets(source: TreeSource, b: Tree, s: Tree, prefix: string, out: Files): Promise<boolean> {
  for (const { name, entries } of zipEntries(b, s)) {
    const [be, se] = entries
    if (!se || sameEntry(be, se)) continue
    const path = joinPath(prefix, name)
    if (se.type === 'dir') {
      if (!(await collectTargets(source, await asTree(source, be), await source(se.tree), path, out))) return false
    } else if (se.type === 'file' && se.size > 0 && (!be || be.type === 'dir')) {
      if (out.size >= MAX_RENAME_TARGETS) return false
      out.set(path, se)
    }
  }
  return true
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1)

/** Sources and targets of the same content paired (and taken out of both maps): a target with the source's name first. */
function pairIdentical(sources: Files, targets: Files): Rename[] {
  const byContent = new Map<Digest, string[]>()
  for (const [path, entry] of sources) byContent.set(contentDigest(entry), [...(byContent.get(contentDigest(entry)) ?? []), path])
  const renames: Rename[] = []
  for (const [to, entry] of targets) {
    const candidates = byContent.get(contentDigest(entry))?.filter((from) => sources.has(from))
    if (!candidates?.length) continue
    const from = candidates.find((c) => baseName(c) === baseName(to)) ?? candidates[0]!
    renames.push({ from, to, score: 100 })
    sources.delete(from)
  }
  for (const { to } of renames) targets.delete(to)
  return renames
}

/** The pairs at least `threshold` percent alike, best first, each file used once; null when the comparisons would pass MAX_COMPARE_WORK. */
async function pairSimilar(store: Store, sources: Files, targets: Files, threshold: number): Promise<Rename[] | null> {
  const signatures = new Map<Digest, Signature | null>()
  const [from, to] = await Promise.all([sources, targets].map((files) => signed(store, files, signatures)))
  const scored: Rename[] = []
  let work = 0
  for (const [target, t] of to!) {
    for (const [origin, s] of from!) {
      if (!sizesCanReach(s.size, t.size, threshold)) continue
      work += s.buckets.length + t.buckets.length
      if (work > MAX_COMPARE_WORK) return null
      const score = (sharedBytes(s, t) * 100) / Math.max(s.size, t.size)
      if (score >= threshold) scored.push({ from: origin, to: target, score })
    }
  }
  scored.sort((x, y) => y.score - x.score || Number(baseName(y.from) === baseName(y.to)) - Number(baseName(x.from) === baseName(x.to)))
  const used = new Set<string>()
  const renames: Rename[] = []
  for (const r of scored) {
    if (used.has(r.from) || used.has(r.to)) continue
    used.add(r.from).add(r.to)
    renames.push(r)
  }
  return renames
}

/** The signature of each file that can be compared by content (text, a blob of at most 1 MiB), read once per content. */
async function signed(store: Store, files: Files, cache: Map<Digest, Signature | null>): Promise<Map<string, Signature>> {
  const out = new Map<string, Signature>()
  for (const [path, entry] of files) {
    if (!('blob' in entry) || entry.size > MAX_INEXACT_RENAME_BYTES) continue
    if (!cache.has(entry.blob)) cache.set(entry.blob, signatureOrNull(await store.readBlob(entry.blob)))
    const signature = cache.get(entry.blob)
    if (signature) out.set(path, signature)
  }
  return out
}

const signatureOrNull = (bytes: Buffer): Signature | null => (looksBinary(bytes) ? null : signatureOf(bytes, true))
