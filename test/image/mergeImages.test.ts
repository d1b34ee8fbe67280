import { describe, expect, it } from 'vitest'
import { type Digest, Store } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { readSnapshot, readTree } from '../../src/world/tree/readObjects.js'
import { mergeImages } from '../../src/image/mergeImages.js'
import { type Run, type Step, openEffects, verifyLedger } from '../../src/index.js'
import { hashPayload } from '../../src/trace/core/stepHash.js'
import { fileEntry, treeObject } from '../../src/objects/Tree.js'
import { tempDir } from '../helpers/tmp.js'

async function world(store: Store, files: Record<string, string>): Promise<Digest> {
  const entries = await Promise.all(Object.entries(files).map(async ([name, text]) => fileEntry(name, false, text.length, await store.writeBlob(Buffer.from(text)), false)))
  const { digest, bytes } = treeObject(entries)
  await store.writeVerified(digest, bytes)
  return digest
}

async function image(
  store: Store,
  parents: Digest[],
  files: Record<string, string>,
  extra: { env?: Record<string, string>; trace?: Digest; effects?: Digest } = {},
): Promise<Digest> {
  const layers = { ...(extra.trace ? { trace: extra.trace } : {}), ...(extra.effects ? { effects: extra.effects } : {}) }
  const snapshot = makeSnapshot({ parents, tree: await world(store, files), message: 'm', createdAt: new Date(0), env: extra.env, layers })
  return store.writeObject(snapshot)
}

function step(idx: number, name: string, type: Step['type'], input: string, output: string): Step {
  return { idx, name, type, input, output, inputHash: hashPayload(input), outputHash: hashPayload(output), startedAt: new Date(idx * 1000).toISOString(), durationMs: 1 }
}

/** A run object in the store whose steps are `[name, type, input, output]` rows. */
async function run(store: Store, runId: string, rows: Array<[string, Step['type'], string, string]>, encrypted = false): Promise<Digest> {
  const value: Run = {
    kind: 'run',
    schemaVersion: 1,
    runId,
    entrypoint: 'agent',
    startedAt: new Date(0).toISOString(),
    endedAt: new Date(0).toISOString(),
    status: 'ok',
    redaction: encrypted ? 'encrypt' : 'secrets',
    steps: rows.map((r, i) => step(i, ...r)),
    meta: {},
  }
  if (encrypted) value.encryption = { alg: 'aes-256-gcm', kdf: 'raw', keyCheck: 'x' }
  return store.writeObject(value)
}

async function fileText(store: Store, tree: Digest, name: string): Promise<string> {
  const entry = (await readTree(store, tree)).entries.find((e) => e.name === name)
  return (await store.readBlob((entry as { blob: Digest }).blob)).toString()
}

describe('mergeImages', () => {
  it('merges two images that diverged: both parents, the world merged line by line, a layer one side changed taken from it', async () => {
    const store = await Store.init(tempDir('merge-images'))
    const traceA = await run(store, 'run-0000000000000000000a', [['ask', 'llm', 'q', 'a']])
    const base = await image(store, [], { 'f.txt': '1\n2\n3\n' }, { env: { MODE: 'x' } })
    const ours = await image(store, [base], { 'f.txt': 'one\n2\n3\n' }, { env: { MODE: 'x', OURS: '1' } })
    const theirs = await image(store, [base], { 'f.txt': '1\n2\nthree\n', 'new.txt': 'n\n' }, { env: { MODE: 'y' }, trace: traceA })
    const result = await mergeImages({ store, ours, theirs, now: () => new Date(0) })
    expect(result.outcome).toBe('merged')
    if (result.outcome !== 'merged') return
    const merged = await readSnapshot(store, result.id)
    expect(merged.parents).toEqual([ours, theirs])
    expect(await fileText(store, merged.world.tree, 'f.txt')).toBe('one\n2\nthree\n')
    expect(await fileText(store, merged.world.tree, 'new.txt')).toBe('n\n')
    expect(merged.world.env).toEqual({ MODE: 'y', OURS: '1' })
    expect(merged.trace).toBe(traceA)
    expect(result.layers.map((l) => l.summary)).toEqual(['world: clean, 1 merged line by line', 'trace: taken from theirs'])
  })

  it('reports up to date and fast-forward instead of writing a merge', async () => {
    const store = await Store.init(tempDir('merge-images'))
    const base = await image(store, [], { 'f.txt': '1\n' })
    const next = await image(store, [base], { 'f.txt': '2\n' })
    expect(await mergeImages({ store, ours: next, theirs: base })).toEqual({ outcome: 'up-to-date', id: next, layers: [] })
    expect(await mergeImages({ store, ours: base, theirs: next })).toEqual({ outcome: 'fast-forward', id: next, layers: [] })
  })

  it('refuses unrelated images with exit 2 unless asked, then merges against an empty base', async () => {
    const store = await Store.init(tempDir('merge-images'))
    const a = await image(store, [], { 'a.txt': 'a\n' })
    const b = await image(store, [], { 'b.txt': 'b\n' })
    await expect(mergeImages({ store, ours: a, theirs: b })).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
    const result = await mergeImages({ store, ours: a, theirs: b, allowUnrelated: true })
    expect(result.outcome).toBe('merged')
  })

  it('merges criss-cross histories against the merge of both bases, where either base alone would conflict', async () => {
    const store = await Store.init(tempDir('merge-images'))
    const root = await image(store, [], { 'f.txt': '1\n2\n3\n' })
    const a1 = await image(store, [root], { 'f.txt': 'A\n2\n3\n' })
    const b1 = await image(store, [root], { 'f.txt': '1\n2\nB\n' })
    const a2 = await image(store, [a1, b1], { 'f.txt': 'A\n2\nB\n' })
    const b2 = await image(store, [b1, a1], { 'f.txt': 'A\n2\nB\n' })
    const a3 = await image(store, [a2], { 'f.txt': 'A\nX\nB\n' })
    const b3 = await image(store, [b2], { 'f.txt': 'A\n2\nB\n', 'g.txt': 'g\n' })
    const result = await mergeImages({ store, ours: a3, theirs: b3 })
    expect(result.outcome).toBe('merged')
    if (result.outcome !== 'merged') return
    expect(result.bases.sort()).toEqual([a1, b1].sort())
    expect(await fileText(store, (await readSnapshot(store, result.id)).world.tree, 'f.txt')).toBe('A\nX\nB\n')
  })

  it('returns a conflict, with no snapshot written, when both sides changed the same lines, a layer, or an env key', async () => {
    const store = await Store.init(tempDir('merge-images'))
    const base = await image(store, [], { 'f.txt': '1\n' }, { env: { K: 'b' } })
    const ours = await image(store, [base], { 'f.txt': 'mine\n' }, { env: { K: 'o' }, trace: await run(store, 'run-0000000000000000000a', [['ask', 'llm', 'q', 'a']], true) })
    const theirs = await image(store, [base], { 'f.txt': 'yours\n' }, { env: { K: 't' }, trace: await run(store, 'run-0000000000000000000b', [['ask', 'llm', 'q', 'b']]) })
    const result = await mergeImages({ store, ours, theirs })
    expect(result.outcome).toBe('conflict')
    if (result.outcome !== 'conflict') return
    expect(result.conflicts.map((c) => c.path)).toEqual(['f.txt'])
    expect(result.layerConflicts).toEqual(['world.env.K', 'trace'])
    expect(result.layers.map((l) => l.summary)).toEqual(['world: conflict (1 path: f.txt)', 'trace: conflict (both sides changed it)'])
    expect(await fileText(store, result.tree, 'f.txt')).toContain('<<<<<<<')
  })

  it('merges the conversation: the shared steps, ours after them, then one step summing up what theirs did', async () => {
    const store = await Store.init(tempDir('merge-images'))
    const shared: Array<[string, Step['type'], string, string]> = [
      ['read task', 'input', 'task', 'fix the bug'],
      ['plan', 'llm', 'task', 'try A or B'],
    ]
    const base = await image(store, [], { 'f.txt': '1\n' }, { trace: await run(store, 'run-00000000000000000001', shared) })
    const ours = await image(
      store,
      [base],
      { 'f.txt': '1\n', 'a.txt': 'A\n' },
      { trace: await run(store, 'run-00000000000000000002', [...shared, ['edit', 'tool', 'a.txt', 'ok']]) },
    )
    const theirs = await image(
      store,
      [base],
      { 'f.txt': '2\n' },
      {
        trace: await run(store, 'run-00000000000000000003', [
          ...shared,
          ['search', 'tool', 'q', 'hits'],
          ['edit', 'tool', 'f.txt', 'ok'],
          ['search', 'tool', 'q2', 'hits'],
          ['think', 'llm', 'x', 'y'],
        ]),
      },
    )
    const result = await mergeImages({ store, ours, theirs, now: () => new Date(86_400_000) })
    expect(result.outcome).toBe('merged')
    if (result.outcome !== 'merged') return
    const merged = (await store.readObject((await readSnapshot(store, result.id)).trace!, 'run')) as unknown as Run
    expect(merged.steps.map((s) => s.name)).toEqual(['read task', 'plan', 'edit', 'merge'])
    expect(merged.steps.map((s) => s.idx)).toEqual([0, 1, 2, 3])
    expect(merged.steps[3]!.output).toEqual({ steps: 4, byType: { tool: 3, llm: 1 }, tools: ['search', 'edit'], files: ['f.txt'] })
    expect(merged.steps[3]!.outputHash).toBe(hashPayload(merged.steps[3]!.output))
    expect(merged.parent).toBe('run-00000000000000000002')
    expect(result.layers.find((l) => l.layer === 'trace')!.summary).toBe("trace: merged (2 shared steps, ours' 1 after them, theirs' 4 summed up in one step)")
  })

  it('refuses a trace layer that is not a run with exit 5', async () => {
    const store = await Store.init(tempDir('merge-images'))
    const base = await image(store, [], { 'f.txt': '1\n' })
    const ours = await image(store, [base], { 'f.txt': '1\n' }, { trace: await store.writeBlob(Buffer.from('not a run')) })
    const theirs = await image(store, [base], { 'f.txt': '1\n' }, { trace: await run(store, 'run-00000000000000000003', [['a', 'tool', 'b', 'c']]) })
    await expect(mergeImages({ store, ours, theirs })).rejects.toMatchObject({ exitCode: 5 })
  })

  it('merges the effects layer as the union of both ledgers, and calls one key with two results a conflict', async () => {
    const store = await Store.init(tempDir('merge-images'))
    const env = {}
    const ledgerWith = async (base: Digest | undefined, calls: Array<[string, string]>) => {
      const effects = await openEffects({ store, env, ...(base ? { ledger: base } : {}) })
      for (const [key, result] of calls) await effects.tool('email.send', async () => result, { class: 'irreversible', key: () => key })({ key })
      return effects.ledger()
    }
    const shared = await ledgerWith(undefined, [['mail:a', 'sent a']])
    const base = await image(store, [], { 'f.txt': '1\n' }, { effects: shared })
    const ours = await image(store, [base], { 'f.txt': '1\n' }, { effects: await ledgerWith(shared, [['mail:b', 'sent b']]) })
    const theirs = await image(store, [base], { 'f.txt': '1\n' }, { effects: await ledgerWith(shared, [['mail:c', 'sent c']]) })
    const merged = await mergeImages({ store, ours, theirs })
    expect(merged.layers.find((l) => l.layer === 'effects')!.summary).toBe('effects: merged (3 entries, union by idempotency key)')
    if (merged.outcome !== 'merged') throw new Error(merged.outcome)
    const ledger = await verifyLedger({ store, ledger: (await readSnapshot(store, merged.id)).effects!, env })
    expect(ledger.entries.map((e) => e.idempotencyKey).sort()).toEqual(['mail:a', 'mail:b', 'mail:c'])

    const clash = await image(store, [base], { 'f.txt': '1\n' }, { effects: await ledgerWith(shared, [['mail:b', 'a different result']]) })
    const conflict = await mergeImages({ store, ours, theirs: clash })
    expect(conflict.outcome).toBe('conflict')
    expect(conflict.layers.find((l) => l.layer === 'effects')!.summary).toBe('effects: conflict (one idempotency key with two different results)')
  })
})
