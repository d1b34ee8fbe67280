import { mkdirSync } from 'node:fs'
import { FileWriteError, InternalError } from '../../errors/index.js'
import { errnoCode } from '../../util/fsx.js'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import type { StructuredObject } from '../../objects/StructuredObject.js'
import { admitTree } from './admitTree.js'
import { fsPath } from '../../util/fsName.js'
import { type FileWrite, layOut, writeFiles } from './materializeTree.js'
import { validateSnapshot } from '../../objects/Snapshot.js'
import { type Chunks, validateChunks } from '../../objects/Chunks.js'
import { type Tree, validateTree } from '../../objects/Tree.js'
import { MAX_TREE_DEPTH } from './checkoutCost.js'
import type { Limits } from '../../util/limits.js'

/** A file an arriving object fills: its path (a name that is not UTF-8 escaped as `fsName` keeps it: `fsPath` gives the file system's) and its exact mode. */
export interface FilePlace {
  readonly abs: string
  readonly entry: { readonly mode: number }
}

/** Files laid out, waiting for their blobs. */
interface Plan {
  waiting: Map<Digest, FileWrite[]>
  /** Chunked files: written from the store by `finish`. */
  chunked: FileWrite[]
  files: number
}

/**
 * A snapshot checked out while its objects arrive (a clone's pull), into a directory no
 * one sees until the whole image has been checked and moved into the store. A pack holds
 * its structured objects first: once blobs arrive, the snapshot's trees are all in
 * hand, so the tree is admitted (`admitTree`) and laid out, and from then on the pull's
 * threads write each file as they check its blob (`places`), on the pull's one pass over
 * the pack, instead of on a second pass decompressing and hashing every object again.
 * What did not arrive that way (objects the store had, chunked files) `finish` writes
 * from the store. When the trees are not all in by the first blob, or the tree is
 * refused, nothing is written here (`planned` stays false) and the caller checks out as
 * usual, which reports any refusal.
 */
export class ArrivingCheckout {
  private readonly trees = new Map<Digest, Tree>()
  private readonly chunkLists = new Map<Digest, Chunks>()
  private root: Digest | null = null
  private tree: Digest | null = null
  private plan: Plan | null | 'given up' = null

  constructor(private readonly opts: { into: string; allowExternalSymlinks: boolean; limits?: Limits }) {}

  /** Whether files are being written here (else the caller checks out on its own). */
  get planned(): boolean {
    return this.plan !== null && this.plan !== 'given up'
  }

  /** The snapshot to check out, known before its first object arrives. */
  readonly image = (root: Digest): void => {
    this.root = root
  }

  /** A structured object of the image, checked against its digest. */
  readonly structured = (digest: Digest, object: StructuredObject): void => {
    if (object.kind === 'tree') this.keepTree(digest, object)
    else if (object.kind === 'chunks') this.keepChunks(digest, object)
    else if (object.kind === 'snapshot' && digest === this.root) this.tree = this.validTreeOf(digest, object)
  }

  /** Blobs checked, in pack order, one call at a time: the files each fills (taken off the list `finish` writes). The first makes the plan. */
  readonly places = async (blobs: readonly Digest[]): Promise<Array<readonly FilePlace[]>> => {
    if (this.plan === null) this.plan = await this.makePlan()
    const plan = this.plan
    if (plan === 'given up') return []
    return blobs.map((digest) => {
      const files = plan.waiting.get(digest)
      if (files === undefined) return []
      plan.waiting.delete(digest)
      return files // the plan's own: an object made per file cost a 100k-file clone tens of ms and its garbage
    })
  }

  /** Write what did not arrive from the store, and return how many files the tree holds. */
  async finish(store: Store): Promise<number> {
    const plan = this.plan
    if (plan === null || plan === 'given up') throw new InternalError('ArrivingCheckout.finish: nothing was planned')
    await writeFiles(store, [...[...plan.waiting.values()].flat(), ...plan.chunked], 'copy')
    return plan.files
  }

  private keepTree(digest: Digest, object: unknown): void {
    try {
      this.trees.set(digest, validateTree(object, `tree ${digest}`))
    } catch {
      // not kept: the plan gives up, and the image's own check refuses the tree
    }
  }

  private keepChunks(digest: Digest, object: unknown): void {
    try {
      this.chunkLists.set(digest, validateChunks(object, `chunks ${digest}`))
    } catch {
      // not kept: the plan gives up, and the image's own check refuses the list
    }
  }

  private validTreeOf(digest: Digest, object: unknown): Digest | null {
    try {
      return validateSnapshot(object, `snapshot ${digest}`).world.tree
    } catch {
      return null
    }
  }

  private async makePlan(): Promise<Plan | 'given up'> {
    if (this.tree === null || !this.allIn(this.tree)) return 'given up'
    const source = async (digest: Digest) => this.trees.get(digest)!
    const chunks = async (digest: Digest) => this.chunkLists.get(digest)!
    const { into, allowExternalSymlinks, limits } = this.opts
    const admitted = await admitTree({ source, chunks, tree: this.tree, root: into, allowExternalSymlinks, limits }).then(
      ({ files }) => files,
      () => null,
    )
    if (admitted === null) return 'given up'
    const files: FileWrite[] = []
    try {
      mkdirSync(fsPath(into))
      await layOut(source, this.tree, into, '', files)
    } catch (err) {
      throw asFileWriteError(err, into)
    }
    const waiting = new Map<Digest, FileWrite[]>()
    const chunked: FileWrite[] = []
    for (const file of files) {
      if (!('blob' in file.entry)) chunked.push(file)
      else waiting.set(file.entry.blob, [...(waiting.get(file.entry.blob) ?? []), file])
    }
    return { waiting, chunked, files: admitted }
  }

  /** Whether every tree and chunk list under `root` is in hand, each visited once; a tree too deep to check out is not (the caller's checkout refuses it). */
  private allIn(root: Digest): boolean {
    const seen = new Set<Digest>([root])
    const pending: Array<[Digest, number]> = [[root, 0]]
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const [digest, depth] = next
      const held = this.trees.get(digest)
      if (held === undefined || depth > MAX_TREE_DEPTH) return false
      for (const e of held.entries) {
        if (e.type === 'file' && 'chunks' in e && !this.chunkLists.has(e.chunks)) return false
        if (e.type !== 'dir' || seen.has(e.tree)) continue
        seen.add(e.tree)
        pending.push([e.tree, depth + 1])
      }
    }
    return true
  }
}

/** A file system's refusal (ENOENT, EACCES, ENOSPC…) as the machine's fault it is (exit 2), naming the path; anything else as it is. */
function asFileWriteError(err: unknown, where: string): unknown {
  const code = errnoCode(err)
  if (code === undefined) return err
  const path = String((err as NodeJS.ErrnoException).path ?? where)
  return new FileWriteError(`cannot write ${path}: ${(err as Error).message}`, { path, code }, { cause: err })
}
