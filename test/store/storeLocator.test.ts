import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import {
  Store,
  StoreNotFoundError,
  UsageError,
  Workspace,
  createTag,
  describeImage,
  forkImage,
  gc,
  initWorkspace,
  listRuns,
  listTags,
  log,
  openEffects,
  showObject,
  snapshotWorkspace,
  status,
  verify,
  verifyLedger,
} from '../../src/index.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

describe('one store locator: { dir?, store? } in every call', () => {
  it('finds the store from dir, takes it by path, or takes it open: the same store each way', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const elsewhere = join(tempDir('store'), 'store')
    await initWorkspace({ dir, store: elsewhere })
    const byPath = await snapshotWorkspace({ dir, store: elsewhere, message: 'by path' })
    const open = await Store.open(elsewhere)
    expect((await status({ dir, store: open })).head).toBe(byPath.id)
    expect(await listRuns({ dir, store: elsewhere })).toEqual([])
    const effects = await openEffects({ dir, store: open, env: {} })
    expect(effects.store.root).toBe(elsewhere)
    const ws = await Workspace.open({ dir, store: elsewhere })
    expect([ws.dir, ws.store.root]).toEqual([dir, elsewhere])

    const found = await makeWorkspace({ 'b.txt': 'b' })
    await initWorkspace({ dir: found })
    mkdirSync(join(found, 'sub'))
    const fromSub = await Workspace.open({ dir: join(found, 'sub') })
    expect([fromSub.dir, fromSub.store.root]).toEqual([found, join(found, '.forkpoint')])
  })

  it('the calls that once took an open Store only take { dir } too', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    await initWorkspace({ dir })
    const { id } = await snapshotWorkspace({ dir, message: 'one' })
    await createTag({ dir, name: 'v1' })
    expect((await listTags({ dir })).map((t) => t.name)).toEqual(['v1'])
    expect((await log({ dir })).map((e) => e.id)).toEqual([id])
    expect((await showObject({ dir, id: 'v1' })).id).toBe(id)
    expect((await describeImage({ dir, spec: 'v1' })).id).toBe(id)
    expect(await forkImage({ dir, id, n: 2 })).toHaveLength(2)
    expect((await verify({ dir })).ok).toBe(true)
    expect(Array.isArray((await gc({ dir })).removed)).toBe(true)
    const effects = await openEffects({ dir, env: {} })
    await verifyLedger({ dir, ledger: await effects.ledger(), env: {} })
  })

  it('fails with StoreNotFoundError when no store is named or found, in every call but Workspace.open and initWorkspace', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    await expect(status({ dir })).rejects.toThrow(StoreNotFoundError)
    await expect(listRuns({ dir })).rejects.toThrow(StoreNotFoundError)
    await expect(openEffects({ dir, env: {} })).rejects.toThrow(StoreNotFoundError)
    expect(existsSync(join(dir, '.forkpoint'))).toBe(false)
  })

  it('reads no FORKPOINT_STORE: the store is named by the caller or found from dir (the CLI reads the variable)', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    await initWorkspace({ dir })
    const elsewhere = join(tempDir('store'), 'store')
    await initWorkspace({ dir, store: elsewhere })
    vi.stubEnv('FORKPOINT_STORE', elsewhere)
    try {
      expect((await Workspace.open({ dir })).store.root).toBe(join(dir, '.forkpoint'))
      const other = await makeWorkspace({ 'b.txt': 'b' })
      expect((await initWorkspace({ dir: other })).storeDir).toBe(join(other, '.forkpoint'))
    } finally {
      vi.unstubAllEnvs()
    }
  })
})

describe('Workspace.open', () => {
  it('refuses the old positional form instead of opening the current directory', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    await expect(Workspace.open(dir as never)).rejects.toThrow(UsageError)
    expect(existsSync(join(dir, '.forkpoint'))).toBe(false)
  })

  it('makes a store where there is none', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const ws = await Workspace.open({ dir })
    expect(ws.store.root).toBe(join(dir, '.forkpoint'))
  })

  it('never replaces a store that is there but does not open with a fresh one', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    await initWorkspace({ dir })
    rmSync(join(dir, '.forkpoint', 'objects'), { recursive: true })
    await expect(Workspace.open({ dir })).rejects.toThrow(StoreNotFoundError)
    expect(existsSync(join(dir, '.forkpoint', 'objects'))).toBe(false)

    const notAStore = join(tempDir('junk'), 'store')
    mkdirSync(notAStore)
    writeFileSync(join(notAStore, 'notes.txt'), 'mine')
    await expect(Workspace.open({ dir, store: notAStore })).rejects.toThrow(StoreNotFoundError)
    expect(existsSync(join(notAStore, 'HEAD'))).toBe(false)
  })
})
