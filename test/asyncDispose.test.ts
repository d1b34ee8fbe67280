import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { type Effects, Recorder, Store, Workspace, listRuns, openEffects } from '../src/index.js'
import { storeWorkspace } from './helpers/workspace.js'
import { makeWorkspace } from './helpers/tmp.js'

// `await using` here is compiled as a user's TypeScript would be; each closable of the public API ends itself.
describe('every closable implements Symbol.asyncDispose', () => {
  it('the symbol exists on this Node', () => {
    expect(typeof Symbol.asyncDispose).toBe('symbol')
  })

  it('Workspace: aborts the live branches it made, keeps persistent and ended ones', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    let paths: string[]
    {
      await using ws = await Workspace.open({ dir })
      const [live, kept, done] = [await ws.branch('live'), await ws.branch('kept', { persistent: true }), await ws.branch('done')]
      await done.commit()
      paths = [live.path, kept.path]
    }
    const ws = await Workspace.open({ dir })
    expect((await ws.branches()).map((b) => b.name)).toEqual(['kept'])
    expect(existsSync(paths[0]!)).toBe(false)
    await (await ws.openBranch('kept')).abort()
  })

  it('Branch: aborts itself unless it ended', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    {
      await using branch = await ws.branch('scoped')
      expect(branch.status).toBe('live')
    }
    expect(await ws.branches()).toEqual([])
  })

  it('Store: makes what it wrote durable', async () => {
    const { store: existing } = await storeWorkspace()
    let scoped: Store
    {
      await using store = await Store.open(existing.root)
      await store.writeBlob(Buffer.from('written in scope'))
      scoped = store
    }
    expect(scoped.takeUnsynced()).toEqual([]) // synced: nothing left to make durable
  })

  it('Recorder: a run not finished is kept as failed', async () => {
    const { dir } = await storeWorkspace()
    {
      await using rec = await Recorder.start({ entrypoint: 'scoped', dir, env: {} })
      await rec.tool('search', { q: 'x' }, async () => ['hit'])
    }
    expect((await listRuns({ dir })).map((r) => [r.entrypoint, r.status, r.steps])).toEqual([['scoped', 'failed', 1]])
  })

  it('Effects: a context neither committed nor dropped drops what it deferred', async () => {
    const { store } = await storeWorkspace()
    let sent = 0
    let scoped: Effects
    {
      await using effects = await openEffects({ store, mode: 'speculative', env: {} })
      await effects.tool('email.send', async () => ++sent, { class: 'irreversible', key: () => 'mail:1' })({})
      scoped = effects
    }
    expect(scoped.entries().map((e) => [e.idempotencyKey, e.status])).toEqual([
      ['mail:1', 'deferred'],
      ['mail:1', 'dropped'],
    ])
    expect(scoped.pending()).toEqual([])
    expect(sent).toBe(0)
  })
})
