import { existsSync, promises as fs, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DigestMismatchError, InvalidImageError } from '../errors/index.js'
import { type Digest, digestHex, hashFile, sha256 } from '../store/digest.js'
import { type Lock, acquireLock } from '../store/lockFile.js'
import { OBJECT_MODE, type Store } from '../store/Store.js'
import type { BlobRef } from './Descriptor.js'
import type { TransferOptions, Transport } from './Transport.js'

/** Where an object of an incoming image is: staged (untrusted until checked) or already in the store. */
export interface Located {
  path: string
  staged: boolean
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

  /** The file holding an object: staged, else in the store, else null. */
  async locate(digest: Digest): Promise<Located | null> {
    if (this.has(digest)) return { path: this.path(digest), staged: true }
    return (await this.store.has(digest)) ? { path: this.store.objectPath(digest), staged: false } : null
  }

  /**
   * Fetch one blob into the staging area, continuing a partial download, and keep it only
   * if it has exactly the promised size and digest. Returns the bytes transferred.
   */
  async download(transport: Transport, blob: BlobRef, { signal, onBytes }: TransferOptions = {}): Promise<number> {
    if (this.has(blob.digest)) return 0
    const part = `${this.path(blob.digest)}.part`
    let have = (await fs.stat(part).catch(() => null))?.size ?? 0
    if (have > blob.size) have = 0
    const stream = have === blob.size && have > 0 ? null : await transport.openBlob(blob.digest, have, { signal })
    if (stream === null && have !== blob.size) {
      throw new InvalidImageError(`the image names object ${blob.digest}, which ${transport.location} does not have`, { digest: blob.digest })
    }
    let received = 0
    if (stream) {
      if (stream.offset !== have) have = 0
      const handle = await fs.open(part, have === 0 ? 'w' : 'a')
      try {
        for await (const chunk of stream.body) {
          if (have + received + chunk.length > blob.size) {
            await fs.rm(part, { force: true })
            throw new DigestMismatchError(`object ${blob.digest} from ${transport.location} is larger than the ${blob.size} bytes its manifest says`, { digest: blob.digest })
          }
          await handle.write(chunk)
          received += chunk.length
          onBytes?.(chunk.length)
        }
      } finally {
        await handle.close()
      }
    }
    await this.accept(blob, part, transport.location)
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
  async accept(blob: BlobRef, file: string, source: string): Promise<void> {
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
   * Move staged objects into the store, in the given order (children before parents);
   * returns how many were new. Two stats and a rename each, synchronously: for the
   * thousands of a cold pull, a thread-pool trip per stat cost more than the renames.
   */
  async commit(order: Digest[]): Promise<number> {
    let moved = 0
    for (const digest of order) {
      if (!this.has(digest) || existsSync(this.store.objectPath(digest))) continue
      await this.store.moveIntoPlace(this.path(digest), this.store.objectPath(digest))
      moved++
    }
    return moved
  }

  /** Remove the staging area (after a commit, or when it cannot be resumed) and let others in. */
  async discard(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true })
    await this.close()
  }
}
