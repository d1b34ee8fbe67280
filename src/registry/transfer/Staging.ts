import { createHash } from 'node:crypto'
import { createReadStream, existsSync, promises as fs, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DigestMismatchError, InvalidImageError, InvalidPackError } from '../../errors/index.js'
import { type Digest, digestHex, hashFile, sha256 } from '../../objects/digest.js'
import { LocalPacks } from '../../store/LocalPacks.js'
import { BatchedWrites } from '../../util/BatchedWrites.js'
import { type Lock, acquireLock } from '../../store/lockFile.js'
import { objectFromBytes, readObjectFile, readStoredObject } from '../../store/objectGraph.js'
import { objectEdges } from '../../objects/kinds.js'
import { snapshotParents } from '../../objects/Snapshot.js'
import type { ReadIndex } from '../../store/PackIndex.js'
import { OBJECT_MODE, type Store } from '../../store/Store.js'
import type { StructuredObject } from '../../objects/StructuredObject.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { type PackSource, readPackRanges } from '../pack/readPackRanges.js'
import { readPackFrames } from '../pack/readPackFrames.js'
import type { FrameCheckers } from '../pack/FrameCheckers.js'
import type { FilePlace } from '../../world/checkout/ArrivingCheckout.js'
import type { BlobStream, TransferOptions } from '../transport/Transport.js'

/** An object of an incoming image as its check sees it: staged (untrusted until checked) or already in the store, its size, and its parsed form when structured. */
export interface Described {
  staged: boolean
  size: number
  object: StructuredObject | null
}

/** A pack fetched whole, checked, to be kept whole by the store. */
interface WholePack {
  index: ReadIndex
  /** The index as the store keeps it. */
  indexBytes: Buffer
  file: string
  objects: Map<Digest, Described>
}

/**
 * Where pulled or unpacked objects wait, inside the store's `tmp/` (same file system, so
 * committing is a rename) and outside `objects/`, until the whole image has been verified.
 * The directory is named by what is being fetched, so an interrupted pull finds its
 * finished objects and partial downloads again and resumes them.
 */
export class Staging {
  readonly dir: string
  private readonly store: Store
  private readonly lock: Lock
  private whole: WholePack | null = null

  private constructor(store: Store, dir: string, lock: Lock) {
    this.store = store
    this.dir = dir
    this.lock = lock
  }

  /** Open (and lock: one pull of the same image at a time) the staging area for `key`. Call `close()` or `discard()`. */
  static async open(store: Store, key: string): Promise<Staging> {
    const dir = store.path('tmp', `stage-${digestHex(sha256(key)).slice(0, 24)}`)
    const lock = await acquireLock(`${dir}.lock`, { timeoutMs: 10 * 60_000, what: 'another transfer of the same image' })
    await fs.mkdir(dir, { recursive: true })
    return new Staging(store, dir, lock)
  }

  /** Keep what was staged (for a later resume) and let others in. */
  async close(): Promise<void> {
    await this.lock.release()
  }

  path(digest: Digest): string {
    return join(this.dir, digestHex(digest))
  }

  /** Whether an object is staged (a stat, synchronously: thousands are asked at a commit). */
  has(digest: Digest): boolean {
    return existsSync(this.path(digest))
  }

  /** An object as the image's check needs it: staged (as a file or in the whole pack), else in the store, else null (read synchronously, as walks read). */
  describe(digest: Digest): Described | null {
    const inPack = this.whole?.objects.get(digest)
    if (inPack) return inPack
    const staged = this.has(digest)
    const file = staged ? readObjectFile(this.path(digest), digest, { hash: false }) : readStoredObject(this.store, digest, { hash: false })
    return file && { staged, size: file.size, object: file.object }
  }

  /**
   * Fetch a pack whole into the staging area, check it frame by frame on threads
   * (`readPackFrames`: every object against its digest; `onObjects` is told of each
   * frame's objects, structured ones parsed, and answers the files they fill, which
   * `threads` write, or else threads of the check's own), and hold it to be kept whole
   * by the store at the commit, one file instead of one per object.
   * A first try reads the pack as it arrives, written to its file on the way; one that
   * continues an interrupted download reads it from the file once it is complete. Returns
   * the bytes transferred.
   */
  async stageWholePack(
    source: PackSource,
    index: ReadIndex,
    indexBytes: Buffer,
    {
      signal,
      onBytes,
      onObjects,
      threads,
    }: TransferOptions & {
      /** The checking threads to use (`readPackFrames`): the caller waits for their writes and closes them. */
      threads?: FrameCheckers | undefined
      onObjects?: ((objects: ReadonlyArray<{ digest: Digest; object: StructuredObject | null }>) => Promise<Array<readonly FilePlace[]>> | Array<readonly FilePlace[]>) | undefined
    } = {},
  ): Promise<number> {
    const file = this.path(index.pack)
    const objects = new Map<Digest, Described>(index.objects.map((o) => [o.digest, { staged: true, size: o.size, object: null }]))
    const check = (from: PackSource) =>
      readPackFrames({
        source: from,
        index,
        signal,
        threads,
        arrivals: {
          frame: (arrived, structured) => {
            const parsed = arrived.map((o) => {
              const bytes = structured.get(o)
              const object = bytes === undefined ? null : objectFromBytes(bytes, o.digest, { hash: false }).object
              if (object !== null) objects.get(o.digest)!.object = object
              return { digest: o.digest, object }
            })
            return onObjects?.(parsed) ?? []
          },
        },
      })
    let fetched: number
    if (this.has(index.pack) || existsSync(`${file}.part`)) {
      fetched = await this.fetchBlob({ digest: index.pack, size: index.packSize }, (offset) => source.open(offset, index.packSize - offset, signal), source.where, onBytes)
      await check(localPack(file, source.where)).catch(async (err: unknown) => {
        if (isPackRefusal(err)) await fs.rm(file, { force: true }) // a pack that fails its check is not worth resuming
        throw err
      })
    } else {
      fetched = await this.readArriving(source, index, check, { signal, onBytes })
    }
    this.whole = { index, indexBytes, file, objects }
    return fetched
  }

  /**
   * Fetch a pack, writing it to its partial file and hashing it as `check` reads it, then
   * keep it if it has exactly the promised size and digest. A pack refused by its check
   * is deleted; one cut short by the network stays partial, for the next try to continue.
   */
  private async readArriving(source: PackSource, index: ReadIndex, check: (from: PackSource) => Promise<void>, { signal, onBytes }: TransferOptions): Promise<number> {
    const pack = { digest: index.pack, size: index.packSize }
    const part = `${this.path(pack.digest)}.part`
    const stream = await source.open(0, pack.size, signal)
    if (stream === null || stream.offset !== 0) {
      await stream?.body[Symbol.asyncIterator]().return?.()
      throw new InvalidImageError(`the image names pack ${pack.digest}, which ${source.where} does not have`, { digest: pack.digest })
    }
    const handle = await fs.open(part, 'w', OBJECT_MODE)
    const file = new BatchedWrites(handle)
    const hash = createHash('sha256')
    let received = 0
    const body = stream.body[Symbol.asyncIterator]()
    const cutShort: { failure: { error: unknown } | null } = { failure: null } // the download's own failure (the network), as the check saw it
    const next = async (): Promise<IteratorResult<Uint8Array>> => {
      const step = await body.next().catch((error: unknown) => {
        cutShort.failure = { error }
        throw error
      })
      if (step.done) return step
      if (received + step.value.length > pack.size)
        throw new DigestMismatchError(`pack ${pack.digest} from ${source.where} is larger than the ${pack.size} bytes its manifest says`, { digest: pack.digest })
      await file.add(step.value)
      hash.update(step.value)
      received += step.value.length
      onBytes?.(step.value.length)
      return step
    }
    // the check stops reading at its last frame; the rest (if any) is read after it, so its `return` must not end the download
    const arriving: PackSource = {
      where: source.where,
      open: async () => ({ offset: 0, body: { [Symbol.asyncIterator]: () => ({ next, return: async () => ({ done: true, value: undefined }) }) } }),
    }
    try {
      await check(arriving)
      while (!(await next()).done);
      await file.flush()
    } catch (err) {
      await body.return?.() // the download itself ends here
      await file.flush().catch(() => undefined) // what arrived stays, for the next try to continue from
      await handle.close()
      if (cutShort.failure !== null) throw cutShort.failure.error
      if (isPackRefusal(err)) await fs.rm(part, { force: true })
      throw err
    }
    await handle.close()
    const actual = received === pack.size ? `sha256:${hash.digest('hex')}` : null
    if (actual !== pack.digest) {
      await fs.rm(part, { force: true })
      const what = actual === null ? `is truncated (${received} of ${pack.size} bytes)` : `hashes to ${actual}`
      throw new DigestMismatchError(`pack ${pack.digest} from ${source.where} ${what}: refusing it`, { digest: pack.digest, actual, size: received })
    }
    await fs.rename(part, this.path(pack.digest))
    return received
  }

  private async fetchBlob(blob: BlobRef, open: (offset: number) => Promise<BlobStream | null>, where: string, onBytes?: (n: number) => void): Promise<number> {
    if (this.has(blob.digest)) return 0
    const part = `${this.path(blob.digest)}.part`
    let have = (await fs.stat(part).catch(() => null))?.size ?? 0
    if (have > blob.size) have = 0
    const stream = have === blob.size && have > 0 ? null : await open(have)
    if (stream === null && have !== blob.size) {
      throw new InvalidImageError(`the image names object ${blob.digest}, which ${where} does not have`, { digest: blob.digest })
    }
    let received = 0
    if (stream) {
      if (stream.offset !== have) have = 0
      const handle = await fs.open(part, have === 0 ? 'w' : 'a')
      try {
        for await (const chunk of stream.body) {
          if (have + received + chunk.length > blob.size) {
            await fs.rm(part, { force: true })
            throw new DigestMismatchError(`object ${blob.digest} from ${where} is larger than the ${blob.size} bytes its manifest says`, { digest: blob.digest })
          }
          await handle.write(chunk)
          received += chunk.length
          onBytes?.(chunk.length)
        }
      } finally {
        await handle.close()
      }
    }
    await this.accept(blob, part, where)
    return received
  }

  /** Stage an object whose bytes were checked against its digest already (an object out of a pack). */
  stageChecked(digest: Digest, bytes: Buffer): void {
    const part = `${this.path(digest)}.part`
    writeFileSync(part, bytes, { mode: OBJECT_MODE })
    renameSync(part, this.path(digest))
  }

  /** Every object staged so far. */
  async staged(): Promise<Set<Digest>> {
    const names = await fs.readdir(this.dir)
    return new Set(names.filter((n) => /^[0-9a-f]{64}$/.test(n)).map((n): Digest => `sha256:${n}`))
  }

  /** Verify a finished file and move it to its staged name, or delete it and throw (exit 5). */
  private async accept(blob: BlobRef, file: string, source: string): Promise<void> {
    const size = (await fs.stat(file)).size
    const actual = size === blob.size ? await hashFile(file) : null
    if (actual !== blob.digest) {
      await fs.rm(file, { force: true })
      const what = actual === null ? `is truncated or oversized (${size} of ${blob.size} bytes)` : `hashes to ${actual}`
      throw new DigestMismatchError(`object ${blob.digest} from ${source} ${what}: refusing it`, { digest: blob.digest, actual, size })
    }
    await fs.chmod(file, OBJECT_MODE)
    await fs.rename(file, this.path(blob.digest))
  }

  /**
   * Move staged objects into the store: the whole pack first (if its objects name only
   * each other and what the store holds, else as files: `keepWholeIfClosed`; `shallow`:
   * the image's snapshots whose parents it leaves out), then the files in the given
   * order (children before parents), so no object is in the store before what it names.
   * Returns how many objects were new. Two stats and a rename a file, synchronously: for
   * the thousands of a cold pull, a thread-pool trip per stat cost more than the renames.
   */
  async commit(order: Digest[], shallow: ReadonlySet<Digest>): Promise<number> {
    await this.keepWholeIfClosed(shallow)
    let moved = this.whole ? await this.commitWholePack(this.whole) : 0
    const staged = await this.staged()
    for (const digest of order) {
      if (!staged.has(digest) || existsSync(this.store.objectPath(digest))) continue
      await this.store.moveIntoPlace(this.path(digest), this.store.objectPath(digest))
      moved++
    }
    return moved
  }

  /**
   * Keep the whole pack whole only if its objects name nothing outside it but what the
   * store holds (or what a shallow image leaves out): else its objects are staged as
   * files like the rest, so the commit's order holds for them too.
   */
  private async keepWholeIfClosed(shallow: ReadonlySet<Digest>): Promise<void> {
    const whole = this.whole
    if (whole === null) return
    for (const [digest, { object }] of whole.objects) {
      if (object === null) continue
      const optional = shallow.has(digest) ? snapshotParents(object) : new Set<Digest>()
      for (const child of objectEdges(object)) {
        if (whole.objects.has(child) || optional.has(child) || (await this.store.has(child))) continue
        await readPackRanges({
          source: localPack(whole.file, `pack ${whole.index.pack}`),
          index: whole.index,
          wanted: () => true,
          accept: (o, bytes) => this.stageChecked(o.digest, bytes),
        })
        this.whole = null
        await fs.rm(whole.file, { force: true })
        return
      }
    }
  }

  private async commitWholePack({ index, indexBytes, file, objects }: WholePack): Promise<number> {
    const added = this.store.lacking([...objects.keys()]).size
    mkdirSync(this.store.packs.dir, { recursive: true })
    await this.store.moveIntoPlace(file, LocalPacks.packFile(this.store.packs.dir, index.pack))
    const indexTmp = `${file}.idx`
    writeFileSync(indexTmp, indexBytes, { mode: OBJECT_MODE })
    await this.store.moveIntoPlace(indexTmp, LocalPacks.indexFile(this.store.packs.dir, index.pack)) // the pack's commit
    this.store.packs.kept(index)
    this.whole = null
    return added
  }

  /** Remove the staging area (after a commit, or when it cannot be resumed) and let others in. */
  async discard(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true })
    await this.close()
  }
}

/** The pack's own fault (a wrong digest, size or frame): not worth keeping for a resume, unlike a failure of the network or of what the objects were handed to. */
function isPackRefusal(err: unknown): boolean {
  return err instanceof DigestMismatchError || err instanceof InvalidPackError
}

/** A pack staged as a file, read like a remote one. */
function localPack(file: string, where: string): PackSource {
  return { where, open: async (offset) => ({ offset, body: createReadStream(file, { start: offset }) }) }
}
