import { existsSync, promises as fs, readdirSync } from 'node:fs'
import { compress } from 'zstd-napi'
import { expect } from 'vitest'
import { join, relative } from 'node:path'
import { Store, initWorkspace, snapshotWorkspace } from '../../src/index.js'
import { listObjects } from '../../src/store/objectGraph.js'
import { listRefs } from '../../src/store/refs.js'
import { writeOnePackFile } from '../helpers/onePack.js'
import { type FileSpec, makeWorkspace, tempDir } from '../helpers/tmp.js'

/** A workspace with a store and one snapshot of `files`. */
export async function makeImage(files: Record<string, FileSpec>): Promise<{ dir: string; store: Store; id: `sha256:${string}` }> {
  const dir = await makeWorkspace(files)
  await initWorkspace({ dir })
  const snap = await snapshotWorkspace({ dir, message: 'fixture' })
  return { dir, store: await Store.open(join(dir, '.forkpoint')), id: snap.id }
}

/** Every object of the store's packs (a cold snapshot of many files writes one) as a file of its own, the packs dropped: for a test of object files. */
export async function unpackStore(store: Store): Promise<void> {
  for (const pack of store.packs.list()) {
    for (const object of pack.index.objects) store.objectFile(object.digest)
    await store.sync()
    store.packs.remove(pack)
  }
}

/** An empty store of its own (the receiving side). */
export async function emptyStore(): Promise<Store> {
  return Store.init(join(tempDir('recv'), '.forkpoint'))
}

/** What a store holds that a reader can see: objects (as files and in kept packs) and refs (for "untouched" checks). */
export async function storeState(store: Store): Promise<{ objects: string[]; packs: string[]; refs: string[] }> {
  return {
    objects: (await listObjects(store)).sort(),
    packs: existsSync(store.packs.dir) ? readdirSync(store.packs.dir).sort() : [],
    refs: (await listRefs(store)).map((r) => `${r.name}=${r.id}`),
  }
}

/** Every file, symlink and directory under `dir` (except .forkpoint) with content, mode or target. */
export async function treeListing(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      if (e.name === '.forkpoint') continue
      const p = join(d, e.name)
      const rel = relative(dir, p)
      if (e.isSymbolicLink()) out[rel] = `-> ${await fs.readlink(p)}`
      else if (e.isDirectory()) {
        out[rel] = 'dir'
        await walk(p)
      } else {
        const st = await fs.stat(p)
        out[rel] = `${(st.mode & 0o777).toString(8)} ${(await fs.readFile(p)).toString('base64')}`
      }
    }
  }
  await walk(dir)
  return out
}

/** Numbered files of pseudo-random bytes, for images big enough to matter. */
export function randomFiles(count: number, size: number, seed = 1): Record<string, Buffer> {
  const files: Record<string, Buffer> = {}
  let x = seed
  for (let i = 0; i < count; i++) {
    const buf = Buffer.alloc(size)
    for (let j = 0; j < size; j += 4) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0
      buf.writeUInt32LE(x, j - (j + 4 > size ? j + 4 - size : 0))
    }
    files[`dir${i % 7}/file${i}.bin`] = buf
  }
  return files
}

/**
 * Run `receive` against a fresh empty store and expect a refusal of class `errorClass`
 * with exit code 5 that leaves the store exactly as it was. Returns the error and the store.
 */
export async function expectRefusedUntouched(receive: (store: Store) => Promise<unknown>, errorClass: new (...args: never[]) => Error): Promise<{ error: Error; store: Store }> {
  const store = await emptyStore()
  const before = await storeState(store)
  const error = (await receive(store).then(
    () => null,
    (e: unknown) => e,
  )) as (Error & { exitCode?: number }) | null
  expect(error).toBeInstanceOf(errorClass)
  expect(error?.exitCode).toBe(5)
  expect(await storeState(store)).toEqual(before)
  return { error: error!, store }
}

export { onePackIndex, writeOnePackFile } from '../helpers/onePack.js'

/** A pack file of one object in one frame, whose frame goes on with `tail` bytes its index does not declare (a hostile pack). */
export function onePackFile(body: Buffer, tail: Buffer = Buffer.alloc(0)): Promise<string> {
  return writeOnePackFile(join(tempDir('pack'), 'one.fpk'), compress(Buffer.concat([body, tail]), { checksumFlag: true }), body)
}

/** The digests of the packs the image tagged at `remote` spans, from its manifests. */
export async function remotePacks(remote: string): Promise<Array<`sha256:${string}`>> {
  const { openTransport } = await import('../../src/registry/transport/openTransport.js')
  const { parseRemote } = await import('../../src/registry/transport/parseRemote.js')
  const { parseImageIndex, parsePacksManifest } = await import('../../src/registry/manifest/imageManifest.js')
  const parsed = parseRemote(remote)
  const transport = await openTransport(parsed, { credentials: null })
  const reference = parsed.reference && 'tag' in parsed.reference ? parsed.reference.tag : 'latest'
  const index = parseImageIndex((await transport.getManifest(reference))!.bytes, 'index')
  const manifest = (await transport.getManifest(index.segments[0]!.digest))!.bytes
  return [...parsePacksManifest(manifest, 'manifest').packs.keys()]
}
