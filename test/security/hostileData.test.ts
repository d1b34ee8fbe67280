import { spawnSync } from 'node:child_process'
import { existsSync, promises as fs } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'

describe('hostile graphs, objects and the checkout budget', async () => {
  const { Store, checkout, cloneImage, initWorkspace, pullImage, unpackImage, verifyLedgers } = await import('../../src/index.js')
  const { sha256 } = await import('../../src/store/digest.js')
  const { objectPathIn } = await import('../../src/store/objectPath.js')
  const { updateRef } = await import('../../src/store/refs.js')
  const { resolveId } = await import('../../src/store/resolveId.js')
  const { readShallow } = await import('../../src/store/shallow.js')
  const { canonicalBytes } = await import('../../src/util/canonicalJson.js')
  const { makeSnapshot } = await import('../../src/world/Snapshot.js')
  const { treeObject } = await import('../../src/world/Tree.js')
  const { chunksBomb, claimShallow, dagBomb, deepTree, hostileImage, packOfBytes, sharedBlobBomb } = await import('../helpers/hostileImages.js')
  const { storeState } = await import('../registry/fixtures.js')
  const { makeWorkspace, tempDir } = await import('../helpers/tmp.js')
  const { CLI, runProgram } = await import('../helpers/cli.js')
  type Store = Awaited<ReturnType<typeof Store.open>>
  type Image = Awaited<ReturnType<typeof hostileImage>>
  const MiB = 1024 ** 2

  /** A workspace with a store of its own: the receiving side. */
  const receiver = async (): Promise<{ dir: string; store: Store }> => {
    const dir = await makeWorkspace({ 'mine.txt': 'mine' })
    await initWorkspace({ dir })
    return { dir, store: await Store.open(join(dir, '.forkpoint')) }
  }

  /** Expect `receive` into a fresh store to be refused with exit 5 (matching `error`), the store as it was. */
  const refusedUntouched = async (receive: (store: Store) => Promise<unknown>, error: Record<string, unknown>): Promise<void> => {
    const { store } = await receiver()
    const before = await storeState(store)
    await expect(receive(store)).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(await storeState(store)).toEqual(before)
  }

  /** Expect unpack, pull and clone of `image` each refused with exit 5 (matching `error`), nothing kept and nothing checked out. */
  const refusedEverywhere = async (image: Image, error: Record<string, unknown>): Promise<void> => {
    await refusedUntouched((store) => unpackImage({ store, input: image.pack }), error)
    await refusedUntouched((store) => pullImage({ store, remote: image.remote }), error)
    const into = join(tempDir('clone'), 'into')
    await expect(cloneImage({ remote: image.remote, into })).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(existsSync(into)).toBe(false)
  }

  it('refuses a shared-subtree (DAG) bomb of 26 trees (2^26 paths) at unpack, pull and clone, visiting each tree once', async () => {
    const bomb = await hostileImage(tempDir, (store) => dagBomb(store, 26))
    await refusedEverywhere(bomb, { code: 'InvalidImageError', data: { limit: 'maxCheckoutPaths' }, message: expect.stringMatching(/FORKPOINT_MAX_CHECKOUT_PATHS/) })
  })

  it('refuses a chunk list naming one 1 MiB blob 2,048 times (2 GiB) at unpack, pull and clone, and at checkout of one let in', async () => {
    const bomb = await hostileImage(tempDir, (store) => chunksBomb(store, MiB, 2048))
    const error = { code: 'InvalidImageError', data: { limit: 'maxExpansion' }, message: expect.stringMatching(/2147483648 bytes.*FORKPOINT_MAX_EXPANSION/) }
    await refusedEverywhere(bomb, error)
    // let in under a raised budget, it still cannot be checked out under the default one
    const { store } = await receiver()
    const { id } = await unpackImage({ store, input: bomb.pack, limits: { maxExpansion: 4096 } })
    const into = join(tempDir('checkout'), 'into')
    await expect(checkout({ store, id, into })).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(existsSync(into)).toBe(false)
  })

  it('refuses 32 directories of 32 files sharing one 1 MiB blob (1 GiB), in place too, before a byte is written', async () => {
    const bomb = await hostileImage(tempDir, (store) => sharedBlobBomb(store, 32, 32, MiB))
    const error = { code: 'InvalidImageError', data: { limit: 'maxExpansion', value: 1024 * MiB } }
    await refusedEverywhere(bomb, error)
    const { dir, store } = await receiver()
    const { id } = await unpackImage({ store, input: bomb.pack, limits: { maxExpansion: 4096 } })
    await expect(checkout({ dir, id, force: true })).rejects.toMatchObject({ exitCode: 5, ...error })
    expect(existsSync(join(dir, 'd0'))).toBe(false)
    expect(existsSync(join(dir, 'mine.txt'))).toBe(true)
  })

  it('refuses a budget an option sets lower: bytes a checkout writes', async () => {
    const image = await hostileImage(tempDir, (store) => sharedBlobBomb(store, 2, 2, MiB))
    await refusedUntouched((store) => unpackImage({ store, input: image.pack, limits: { maxCheckoutBytes: 3 * MiB } }), {
      code: 'InvalidImageError',
      data: { limit: 'maxCheckoutBytes', max: 3 * MiB, value: 4 * MiB },
      message: expect.stringMatching(/FORKPOINT_MAX_CHECKOUT_BYTES \(option limits.maxCheckoutBytes\)/),
    })
  })

  it.runIf(process.getuid?.() === 0)('refuses the bombs for a caller who is not root (nobody) too: unpack, pull and clone exit 5, nothing written', async () => {
    const home = tempDir('hostile-nobody')
    const asNobody = (cwd: string, ...args: string[]) =>
      runProgram(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', 'env', `HOME=${home}`, CLI, ...args], { cwd })
    for (const build of [(store: Store) => dagBomb(store, 26), (store: Store) => chunksBomb(store, MiB, 2048), (store: Store) => deepTree(store, 300)]) {
      const image = await hostileImage(tempDir, build)
      const layout = /^file:\/\/(.*):bomb$/.exec(image.remote)![1]!
      const recv = join(home, 'recv')
      await fs.mkdir(recv, { recursive: true })
      for (const dir of [dirname(image.pack), layout, home]) expect(spawnSync('chown', ['-R', 'nobody:nogroup', dir]).status).toBe(0)
      expect((await asNobody(recv, 'init')).code).toBe(0)
      const before = await storeState(await Store.open(join(recv, '.forkpoint')))
      for (const args of [
        ['unpack', image.pack],
        ['pull', image.remote],
        ['clone', image.remote, '--into', join(home, 'clone')],
      ]) {
        const r = await asNobody(recv, ...args)
        expect({ args, code: r.code }).toEqual({ args, code: 5 })
        expect(r.stderr).toMatch(/FORKPOINT_MAX_CHECKOUT_PATHS|FORKPOINT_MAX_EXPANSION|more than 256 directories deep/)
      }
      expect(await storeState(await Store.open(join(recv, '.forkpoint')))).toEqual(before)
      expect(existsSync(join(home, 'clone'))).toBe(false)
      await fs.rm(recv, { recursive: true })
    }
  })

  it('refuses a tree 10,000 directories deep at unpack, pull and clone (exit 5, not a stack overflow)', async () => {
    const deep = await hostileImage(tempDir, (store) => deepTree(store, 10_000))
    await refusedEverywhere(deep, { code: 'PathLimitError', message: expect.stringMatching(/more than 256 directories deep/) })
  })

  /** An honest snapshot's canonical text (of an empty tree, whose bytes come with it). */
  const honestSnapshot = (): { text: string; tree: Buffer } => {
    const tree = treeObject([])
    return { text: canonicalBytes(makeSnapshot({ parents: [], tree: tree.digest, message: 'hostile', createdAt: new Date(0) })).toString(), tree: tree.bytes }
  }

  it.each([
    ['an unknown field nested 100,000 deep', (text: string) => `${text.slice(0, -1)},"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
    ['a second "world" key', (text: string) => `${text.slice(0, -1)},"world":{"tree":"${sha256('elsewhere')}"}}`],
    ['a "__proto__" key', (text: string) => `${text.slice(0, -1)},"zz":{"__proto__":{"polluted":true}}}`],
    ['a number a double cannot hold', (text: string) => `${text.slice(0, -1)},"zz":1e400}`],
    ['a schemaVersion of 1e400 (which fork tripped on)', (text: string) => text.replace('"schemaVersion":1', '"schemaVersion":1e400')],
  ])('refuses a snapshot with %s at unpack (exit 5)', async (_what, tamper) => {
    const { text, tree } = honestSnapshot()
    const pack = await packOfBytes(tempDir, Buffer.from(tamper(text)), [tree])
    await refusedUntouched((store) => unpackImage({ store, input: pack }), { message: expect.stringMatching(/not a structured object/) })
  })

  it('reports a ledger holding 1e400 as malformed (a verify problem), not an internal error', async () => {
    const { store } = await receiver()
    const ledger = await store.writeBlob(Buffer.from(`{"chain":"sha256","entries":[{"seq":1e400}],"head":"x","kind":"ledger","schemaVersion":1}`))
    const tree = await store.writeBlob(treeObject([]).bytes)
    const id = await store.writeObject(makeSnapshot({ parents: [], tree, message: 'with effects', layers: { effects: ledger } }))
    await updateRef({ store, name: 'refs/tags/ledger', id, message: 'test' })
    expect((await verifyLedgers({ store })).problems).toMatchObject([{ ledger, reason: 'malformed', message: expect.stringMatching(/too large for a double/) }])
  })

  it('refuses a ref name longer than a file name may be as a usage error (exit 2), not ENAMETOOLONG', async () => {
    const { dir, store } = await receiver()
    const long = 'r'.repeat(300)
    await expect(checkout({ dir, id: long })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/unknown id or ref/) })
    await expect(resolveId(store, `${long}~1`)).rejects.toMatchObject({ exitCode: 2 })
    const id = await resolveId(store, 'HEAD').catch(() => sha256('none'))
    await expect(updateRef({ store, name: `refs/tags/${long}`, id, message: 'test' })).rejects.toMatchObject({ exitCode: 2, message: expect.stringMatching(/too long/) })
  })

  it('checks a digest before it names a path: sha256:../../../etc/passwd names none (exit 5)', () => {
    expect(() => objectPathIn('/store/objects/sha256', 'sha256:../../../etc/passwd')).toThrow(expect.objectContaining({ exitCode: 5, code: 'MalformedObjectError' }))
  })

  it('refuses a shallow annotation naming a digest that is not a snapshot of the image, and records no cut snapshot whose parents the store holds', async () => {
    const image = await hostileImage(tempDir, (store) => store.writeBlob(treeObject([]).bytes))
    await claimShallow(image.pack, [sha256('a snapshot whose parent the receiving store lacks')])
    await refusedUntouched((store) => unpackImage({ store, input: image.pack }), { code: 'InvalidImageError', message: expect.stringMatching(/not a snapshot of the image/) })
    await claimShallow(image.pack, [image.id])
    const { store } = await receiver()
    await unpackImage({ store, input: image.pack })
    expect(await readShallow(store)).toEqual(new Set())
  })
})
