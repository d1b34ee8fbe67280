import { existsSync, promises as fs, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DigestMismatchError, FileWriteError, InvalidPackError, UnsafePathError, cloneImage, gc, pushImage, snapshotWorkspace, status, verify } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { makeTree } from '../../src/objects/Tree.js'
import { readRef } from '../../src/store/refs.js'
import { Store } from '../../src/store/Store.js'
import { CHUNKING_THRESHOLD } from '../../src/world/scan/storeFile.js'
import { tempDir } from '../helpers/tmp.js'
import { makeImage, randomFiles, remotePacks, treeListing } from './fixtures.js'
import { useRemotes } from './remotes.js'

const remotes = useRemotes()
const credentials = null

/** Every kind of entry a tree holds, and enough files that the pull keeps its pack whole. */
function everyKind(): Parameters<typeof makeImage>[0] {
  return {
    ...randomFiles(400, 1500, 3),
    'src/deep/er/still/main.py': 'print("hi")\n',
    'bin/run': { content: '#!/bin/sh\necho run\n', mode: 0o755 },
    'empty.txt': '',
    'same-a.txt': 'the same bytes',
    'nested/same-b.txt': 'the same bytes',
    'link-to-main': { symlink: 'src/deep/er/still/main.py' },
    'big.bin': Buffer.alloc(CHUNKING_THRESHOLD + 12345, 7), // stored as chunks
    'an empty dir': { dir: true },
  }
}

/** Hidden directories a clone works in: beside the target, or in its store's tmp/. */
function leftovers(target: string, store = join(target, '.forkpoint')): string[] {
  const beside = readdirSync(dirname(target)).filter((n) => n.includes('forkpoint-tmp'))
  const inStore = existsSync(join(store, 'tmp')) ? readdirSync(join(store, 'tmp')).filter((n) => n.startsWith('clone')) : []
  return [...beside, ...inStore]
}

describe('a clone writes the files as the pull brings them, seen only once the image checks out', () => {
  it('ends exactly as the workspace was, clean, on its head, for a store inside or elsewhere, through each transport', async () => {
    const image = await makeImage(everyKind())
    const want = await treeListing(image.dir)
    for (const kind of ['file', 'oci'] as const) {
      const remote = remotes.remote(kind)
      await pushImage({ store: image.store, id: image.id, remote, credentials })
      const into = join(tempDir('clone'), 'ws')
      const cloned = await cloneImage({ remote, into, credentials })
      expect(cloned).toMatchObject({ id: image.id, head: 'main', files: 406 })
      expect(await treeListing(into)).toEqual(want)
      const store = await Store.open(join(into, '.forkpoint'))
      expect(await readRef(store, 'HEAD')).toBe(image.id)
      expect(await fs.readFile(store.path('HEAD'), 'utf8')).toBe('ref: refs/heads/main\n')
      expect((await status({ dir: into })).changes).toEqual([])
      expect(await verify({ store })).toMatchObject({ ok: true })
      expect(leftovers(into)).toEqual([])

      const elsewhere = join(tempDir('elsewhere'), 'st')
      const apart = join(tempDir('apart'), 'ws')
      await cloneImage({ remote, into: apart, store: elsewhere, credentials })
      expect(await treeListing(apart)).toEqual(want)
      expect(existsSync(join(apart, '.forkpoint'))).toBe(false)
      expect(leftovers(apart, elsewhere)).toEqual([])
    }
  })

  it('names that are not UTF-8 arrive byte for byte', async () => {
    const image = await makeImage(randomFiles(300, 500, 7))
    const bad = Buffer.from('bad\xffname', 'latin1')
    writeFileSync(Buffer.concat([Buffer.from(`${image.dir}/`), bad]), 'bytes')
    const snap = await snapshotWorkspace({ dir: image.dir, message: 'bytes' })
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: snap.id, remote, credentials })
    const into = join(tempDir('clone'), 'ws')
    await cloneImage({ remote, into, credentials })
    const names = readdirSync(into, { encoding: 'buffer' }).map((n) => n.toString('hex'))
    expect(names).toContain(bad.toString('hex'))
    expect(readFileSync(Buffer.concat([Buffer.from(`${into}/`), bad]), 'utf8')).toBe('bytes')
    expect((await status({ dir: into })).changes).toEqual([])
  })

  it('names, link targets and a message that read like digests are kept as text: the image verifies, survives gc, and goes and comes through each transport', async () => {
    const looksLikeOne = `sha256:${'0'.repeat(63)}1`
    const image = await makeImage({ ...randomFiles(300, 500, 9), [looksLikeOne]: 'a file named like a digest\n', 'points-at': { symlink: looksLikeOne } })
    const snap = await snapshotWorkspace({ dir: image.dir, message: looksLikeOne })
    expect(await verify({ store: image.store })).toMatchObject({ ok: true })
    await gc({ store: image.store, prune: 'now' })
    const want = await treeListing(image.dir)
    for (const kind of ['file', 'oci'] as const) {
      const remote = remotes.remote(kind)
      await pushImage({ store: image.store, id: snap.id, remote, credentials })
      const into = join(tempDir('clone'), 'ws')
      expect(await cloneImage({ remote, into, credentials })).toMatchObject({ id: snap.id })
      expect(await treeListing(into)).toEqual(want)
      expect(await verify({ store: await Store.open(join(into, '.forkpoint')) })).toMatchObject({ ok: true })
    }
  })

  it('into an empty directory that exists: filled, and nothing else appears beside it', async () => {
    const image = await makeImage(randomFiles(300, 800, 5))
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const parent = tempDir('parent')
    const into = join(parent, 'ws')
    await fs.mkdir(into)
    await cloneImage({ remote, into, credentials })
    expect(await treeListing(into)).toEqual(await treeListing(image.dir))
    expect(readdirSync(parent)).toEqual(['ws'])
  })

  it('a pack damaged past its first files: refused (exit 5), and `into` is left as it was, with nothing beside it', async () => {
    const image = await makeImage(randomFiles(2000, 1024, 9))
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const [pack] = await remotePacks(remote)
    const blob = join(remote.slice('file://'.length).replace(/:[^:/]*$/, ''), 'blobs/sha256', pack!.slice(7))
    const bytes = await fs.readFile(blob)
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 100) ^ 0xff, bytes.length - 100) // in the last frame: every file before it has been handed to the writers
    await fs.chmod(blob, 0o644)
    await fs.writeFile(blob, bytes)
    for (const { existing, store } of [{ existing: false }, { existing: true }, { existing: false, store: join(tempDir('elsewhere'), 'st') }]) {
      const parent = tempDir('parent')
      const into = join(parent, 'ws')
      if (existing) await fs.mkdir(into)
      const error = await cloneImage({ remote, into, credentials, ...(store ? { store } : {}) }).catch((err: Error) => err)
      expect(error).toBeInstanceOf(error instanceof DigestMismatchError ? DigestMismatchError : InvalidPackError)
      expect((error as InvalidPackError).exitCode).toBe(5)
      expect(readdirSync(parent)).toEqual(existing ? ['ws'] : [])
      if (existing) expect(readdirSync(into)).toEqual([])
      if (store) expect(leftovers(into, store)).toEqual([])
    }
  })

  it('a clone that cannot write its files fails as such, not as a damaged pack, and the next try succeeds', async () => {
    const image = await makeImage(randomFiles(300, 800, 11))
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const store = join(tempDir('kept'), 'st')
    const error = await cloneImage({ remote, into: join(tempDir('nowhere'), 'missing', 'ws'), store, credentials }).catch((err: Error) => err)
    expect(error).toBeInstanceOf(FileWriteError)
    expect((error as FileWriteError).exitCode).toBe(2)
    expect((error as FileWriteError).data.code).toBe('ENOENT')
    const into = join(tempDir('somewhere'), 'ws')
    await cloneImage({ remote, into, store, credentials })
    expect(await treeListing(into)).toEqual(await treeListing(image.dir))
  })

  it('a tree that would write outside the target is refused (exit 5) before anything is written, and `into` is left as it was', async () => {
    const image = await makeImage({ 'a.txt': 'a' })
    const sub = await image.store.writeObject({ ...makeTree([{ name: 'escape', type: 'symlink', mode: 0o777, size: 16, target: '../../etc/passwd' }]) })
    const blob = await image.store.writeBlob(Buffer.from('a file beside it'))
    const root = await image.store.writeObject({
      ...makeTree([
        { name: 'file.txt', type: 'file', mode: 0o644, size: 16, blob },
        { name: 'sub', type: 'dir', mode: 0o755, size: 0, tree: sub },
      ]),
    })
    const id = await image.store.writeObject(makeSnapshot({ parents: [], tree: root, message: 'hostile' }))
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id, remote, credentials })
    const parent = tempDir('parent')
    const into = join(parent, 'ws')
    const error = await cloneImage({ remote, into, credentials }).catch((err: Error) => err)
    expect(error).toBeInstanceOf(UnsafePathError)
    expect((error as UnsafePathError).exitCode).toBe(5)
    expect(readdirSync(parent)).toEqual([])
  })
})
