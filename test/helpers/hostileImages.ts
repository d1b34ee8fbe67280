import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { type Digest, Store, initWorkspace, packImage, pushImage } from '../../src/index.js'
import { updateRef } from '../../src/store/refs.js'
import { HEADER_PREFIX_BYTES, type PackFileHeader, encodeHeader } from '../../src/registry/pack/packFile.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { dirEntry, fileEntry, treeObject, type TreeEntry } from '../../src/objects/Tree.js'

/**
 * Hostile images for adversary 2 (THREAT-MODEL.md), built with forkpoint's own store
 * functions: a tree written into a store of its own, under a snapshot tagged `bomb`,
 * packed to a file and pushed to a file:// layout, as an attacker would hand them over.
 */
export interface HostileImage {
  /** The workspace whose store holds the image. */
  dir: string
  store: Store
  id: Digest
  /** The image as a pack file (`unpack`). */
  pack: string
  /** The image in a file:// layout (`pull`, `clone`). */
  remote: string
}

/** A new directory named after `label` (a test's `tempDir`, removed after the file; a benchmark's own). */
export type NewDir = (label: string) => string

/** Write the tree `build` makes, snapshot it, and hand the image over as a pack file and a layout (in directories `tempDir` makes). */
export async function hostileImage(tempDir: NewDir, build: (store: Store) => Promise<Digest>): Promise<HostileImage> {
  const dir = tempDir('hostile-src')
  await initWorkspace({ dir })
  const store = await Store.open(join(dir, '.forkpoint'))
  const id = await store.writeObject(makeSnapshot({ parents: [], tree: await build(store), message: 'hostile', createdAt: new Date(0) }))
  await updateRef({ store, name: 'refs/tags/bomb', id, message: 'hostile image' })
  const pack = join(tempDir('hostile-pack'), 'bomb.fpk')
  await packImage({ store, id, output: pack })
  const remote = `file://${tempDir('hostile-layout')}:bomb`
  await pushImage({ store, id, remote })
  return { dir, store, id, pack, remote }
}

async function writeTree(store: Store, entries: TreeEntry[]): Promise<Digest> {
  const { bytes, digest } = treeObject(entries)
  await store.writeVerified(digest, bytes)
  return digest
}

/** `levels` trees, each `{a: T(i-1), b: T(i-1)}` over a one-file leaf: 2^levels paths from a few KB. */
export async function dagBomb(store: Store, levels: number): Promise<Digest> {
  const blob = await store.writeBlob(Buffer.from('x'))
  let tree = await writeTree(store, [fileEntry('f', false, 1, blob, false)])
  for (let i = 0; i < levels; i++) tree = await writeTree(store, [dirEntry('a', tree), dirEntry('b', tree)])
  return tree
}

/** One file whose `chunks` object lists one blob of `blobBytes` random bytes `times` times. */
export async function chunksBomb(store: Store, blobBytes: number, times: number): Promise<Digest> {
  const blob = await store.writeBlob(randomBytes(blobBytes))
  const chunks = await store.writeObject({ kind: 'chunks', schemaVersion: 1, size: blobBytes * times, chunks: Array.from({ length: times }, () => ({ blob, size: blobBytes })) })
  return writeTree(store, [fileEntry('big', false, blobBytes * times, chunks, true)])
}

/** `dirs` directories sharing one tree of `files` files sharing one blob of `blobBytes` random bytes. */
export async function sharedBlobBomb(store: Store, dirs: number, files: number, blobBytes: number): Promise<Digest> {
  const blob = await store.writeBlob(randomBytes(blobBytes))
  const inner = await writeTree(
    store,
    Array.from({ length: files }, (_, i) => fileEntry(`f${i}`, false, blobBytes, blob, false)),
  )
  return writeTree(
    store,
    Array.from({ length: dirs }, (_, i) => dirEntry(`d${i}`, inner)),
  )
}

/** A chain of `depth` directories, each holding the next. */
export async function deepTree(store: Store, depth: number): Promise<Digest> {
  let tree = await writeTree(store, [])
  for (let i = 0; i < depth; i++) tree = await writeTree(store, [dirEntry('d', tree)])
  return tree
}

/**
 * An image whose objects are these bytes as they are (objects forkpoint's own writers
 * refuse to make: canonical JSON cannot hold them), written to a store and packed: the
 * pack file's path.
 */
export async function packOfBytes(tempDir: NewDir, root: Buffer, others: Buffer[] = []): Promise<string> {
  const dir = tempDir('hostile-src')
  await initWorkspace({ dir })
  const store = await Store.open(join(dir, '.forkpoint'))
  for (const object of others) await store.writeBlob(object)
  const id = await store.writeBlob(root)
  const pack = join(tempDir('hostile-pack'), 'bytes.fpk')
  await packImage({ store, id, output: pack })
  return pack
}

/** Tamper with a pack file's header: it names `shallow` as the snapshots its image cut from their history. */
export async function claimShallow(pack: string, shallow: Digest[]): Promise<void> {
  const file = await fs.readFile(pack)
  const length = file.readUInt32LE(4)
  const header = JSON.parse(file.subarray(HEADER_PREFIX_BYTES, HEADER_PREFIX_BYTES + length).toString()) as PackFileHeader
  await fs.writeFile(pack, Buffer.concat([encodeHeader({ ...header, shallow }), file.subarray(HEADER_PREFIX_BYTES + length)]))
}
