import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { cloneImage, gc, packImage, pullImage, pushImage, type Store, unpackImage, verify } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { RunStore } from '../../src/trace/core/RunStore.js'
import { sha256 } from '../../src/objects/digest.js'
import { tagRef, updateRef } from '../../src/store/refs.js'
import { checkoutAgent } from '../../src/image/checkoutAgent.js'
import { describeImage } from '../../src/image/describeImage.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { makeRunId, type Run } from '../../src/objects/Run.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { emptyStore, storeState } from '../registry/fixtures.js'
import { callOperation, renderingOf } from '../helpers/callOperation.js'

const TRANSCRIPT = '{"role":"user","content":"hi"}\n{"role":"assistant","content":[{"type":"text","text":"hello"}]}\n\n'

/** An image with every kind of layer: files, a transcript trace, an env, a ledger and an unknown layer from a newer writer. */
async function fullImage(): Promise<{ dir: string; store: Store; id: `sha256:${string}`; ledger: `sha256:${string}` }> {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n', 'src/b.ts': 'export {}\n' })
  await fs.writeFile(join(dir, 'chat.jsonl'), TRANSCRIPT)
  const ledger = await store.writeObject({ kind: 'ledger', schemaVersion: 1, entries: [] })
  const result = await snapshotAgent({
    dir,
    trace: 'chat.jsonl',
    env: { HOME: '/home/me', OPENAI_API_KEY: 'sk-secret-value-123456' },
    effects: ledger,
    agent: 'coder',
    message: 'full',
  })
  return { dir, store, id: result.id, ledger }
}

/** A snapshot whose `layer` names an object of another kind (tagged `bad`). */
async function wrongKindImage(layer: 'trace' | 'effects'): Promise<{ dir: string; store: Store; id: `sha256:${string}` }> {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
  const good = await snapshotAgent({ dir })
  const snapshot = makeSnapshot({ parents: [], tree: good.tree, message: 'bad', layers: { [layer]: good.tree } })
  const id = await store.writeObject(snapshot)
  await updateRef({ store, name: tagRef('bad'), id, message: 'test' })
  return { dir, store, id }
}

describe('show', () => {
  /** `forkpoint show ID` as it prints, colours aside (called in-process). */
  async function shownText(dir: string, id: string): Promise<string> {
    return stripVTControlCharacters(renderingOf('show').human(await callOperation('show', { dir, id }), {}))
  }

  it('shows every layer of an image in human form and as JSON', async () => {
    const { dir, id, ledger } = await fullImage()
    const human = await shownText(dir, id.slice(7, 19))
    expect(human).toContain(`snapshot ${id}`)
    expect(human).toContain('agent: coder')
    expect(human).toMatch(/world: tree sha256:[0-9a-f]{64}, 3 files/)
    expect(human).toContain('env: 2 variables\n  HOME=/home/me\n  OPENAI_API_KEY=[redacted secret]')
    expect(human).toMatch(/trace: run-[0-9a-f]{20} \(sha256:[0-9a-f]{64}\), transcript chat\.jsonl, ok, 2 messages\n {2}\[0\] user: hi\n {2}\[1\] assistant: hello/)
    expect(human).toContain(`effects: ${ledger} (ledger)`)
    const json = await callOperation('show', { dir, id })
    expect(json).toMatchObject({
      id,
      kind: 'snapshot',
      world: { files: 3, env: { HOME: '/home/me' } },
      trace: { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant' }] },
      layers: [{ layer: 'effects', id: ledger, kind: 'ledger' }],
    })
  })

  it('shows a trace that is not a transcript as steps', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const run: Run = {
      kind: 'run',
      schemaVersion: 1,
      runId: makeRunId(),
      entrypoint: 'node agent.js',
      startedAt: new Date().toISOString(),
      endedAt: new Date().toISOString(),
      status: 'ok',
      redaction: 'secrets',
      meta: {},
      steps: [{ idx: 0, name: 'fs.read', type: 'tool', input: { path: 'a' }, output: 'x', inputHash: '', outputHash: '', startedAt: new Date().toISOString(), durationMs: 1 }],
    }
    await fs.writeFile(join(dir, 'r.run.json'), JSON.stringify({ ...run, steps: run.steps.map(({ inputHash: _i, outputHash: _o, ...s }) => s) }))
    const id = (await snapshotAgent({ dir, trace: 'r.run.json' })).id
    expect(await shownText(dir, id)).toContain('node agent.js, ok, 1 step\n  [0] tool fs.read')
    expect((await describeImage({ store: store, spec: id })).trace?.messages).toBeNull()
  })

  it('refuses an image whose trace is not a run, or whose effects are not a ledger, with exit 5', async () => {
    for (const layer of ['trace', 'effects'] as const) {
      const { dir, id } = await wrongKindImage(layer)
      await expect(callOperation('show', { dir, id })).rejects.toMatchObject({ exitCode: 5, message: expect.stringContaining(`${layer} layer`) })
    }
  })
})

describe('checkoutAgent', () => {
  it('writes every layer back in the form it came in', async () => {
    const { store, id, ledger } = await fullImage()
    const into = join(tempDir('agent'), 'out')
    const result = await checkoutAgent({ store, id, into })
    expect(result.written.sort()).toEqual(['env.json', 'image.json', 'layers/effects.json', 'trace.jsonl', 'world/'])
    expect(await fs.readFile(join(into, 'trace.jsonl'), 'utf8')).toBe(TRANSCRIPT)
    expect(JSON.parse(await fs.readFile(join(into, 'env.json'), 'utf8'))).toEqual({ HOME: '/home/me', OPENAI_API_KEY: '[redacted secret]' })
    expect(sha256(await fs.readFile(join(into, 'layers/effects.json')))).toBe(ledger)
    expect(sha256(await fs.readFile(join(into, 'image.json')))).toBe(id)
    expect(await fs.readFile(join(into, 'world/src/b.ts'), 'utf8')).toBe('export {}\n')
    expect((await fs.readdir(join(into, 'world'))).sort()).toEqual(['a.txt', 'chat.jsonl', 'src'])
  })

  it('writes a recorded run as its artifact, through the CLI', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const now = new Date().toISOString()
    const run: Run = {
      kind: 'run',
      schemaVersion: 1,
      runId: makeRunId(),
      entrypoint: 'node agent.js',
      startedAt: now,
      endedAt: now,
      status: 'ok',
      redaction: 'secrets',
      meta: {},
      steps: [],
    }
    const runs = RunStore.open({ store })
    await runs.save(run)
    runs.close()
    const id = JSON.parse((await runCli(['snapshot', '--json', '--trace', 'latest'], { cwd: dir })).stdout).id
    const into = join(tempDir('agent'), 'out')
    const r = await runCli(['checkout-agent', id, '--into', into, '--json'], { cwd: dir })
    expect(r.code).toBe(0)
    expect(JSON.parse(await fs.readFile(join(into, 'trace.run.json'), 'utf8'))).toMatchObject({ kind: 'run', runId: run.runId })
    expect(await fs.readdir(into)).not.toContain('env.json')
    expect((await runCli(['runs', 'show', join(into, 'trace.run.json')], { cwd: dir })).code).toBe(0)
  })

  it('refuses an image with a layer of the wrong kind with exit 5 and writes nothing', async () => {
    const { dir, store } = await wrongKindImage('trace')
    const parent = tempDir('agent')
    await expect(checkoutAgent({ store, id: 'bad', into: join(parent, 'out') })).rejects.toMatchObject({ code: 'MalformedObjectError', exitCode: 5 })
    const r = await runCli(['checkout-agent', 'bad', '--into', join(parent, 'out')], { cwd: dir })
    expect(r.code).toBe(5)
    expect(await fs.readdir(parent)).toEqual([])
  })
})

describe('layers from a newer writer', () => {
  it('are shown and written back by their name, and a name that is no file name is refused (exit 5) with nothing written', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const good = await snapshotAgent({ dir })
    const blob = await store.writeBlob(Buffer.from('weights'))
    const id = await store.writeObject({ ...makeSnapshot({ parents: [], tree: good.tree, message: 'newer' }), adapter: blob })
    expect((await describeImage({ store: store, spec: id })).layers).toEqual([{ layer: 'adapter', id: blob, kind: 'blob' }])
    const out = join(tempDir('agent'), 'out')
    await checkoutAgent({ store, id, into: out })
    expect(await fs.readFile(join(out, 'layers/adapter.bin'), 'utf8')).toBe('weights')
    const hostile = await store.writeObject({ ...makeSnapshot({ parents: [], tree: good.tree, message: 'hostile' }), '../../escape': blob })
    const parent = tempDir('agent')
    await expect(checkoutAgent({ store, id: hostile, into: join(parent, 'out') })).rejects.toMatchObject({ exitCode: 5 })
    expect(await fs.readdir(parent)).toEqual([])
  })
})

describe('an image carries every layer', () => {
  it('survives pack and unpack into another store: same id, trace and env, and checkoutAgent there gives the transcript back', async () => {
    const { store, id } = await fullImage()
    const file = join(tempDir('pack'), 'img.fpk')
    await packImage({ store, id, output: file })
    const other = await emptyStore()
    expect((await unpackImage({ store: other, input: file })).id).toBe(id)
    const snapshot = await readSnapshot(other, id)
    expect(snapshot.world.env).toEqual({ HOME: '/home/me', OPENAI_API_KEY: '[redacted secret]' })
    const into = join(tempDir('agent'), 'out')
    await checkoutAgent({ store: other, id, into })
    expect(await fs.readFile(join(into, 'trace.jsonl'), 'utf8')).toBe(TRANSCRIPT)
    expect((await verify({ store: other })).ok).toBe(true)
  })

  it('survives push and pull through a file:// remote', async () => {
    const { store, id, ledger } = await fullImage()
    const remote = `file://${tempDir('layout')}:v1`
    await pushImage({ store, id, remote, credentials: null })
    const other = await emptyStore()
    expect((await pullImage({ store: other, remote, credentials: null })).id).toBe(id)
    const image = await describeImage({ store: other, spec: id })
    expect(image.trace?.messages).toHaveLength(2)
    expect(image.layers).toEqual([{ layer: 'effects', id: ledger, kind: 'ledger' }])
  })

  it('survives clone: the new workspace store holds every layer', async () => {
    const { store, id } = await fullImage()
    const remote = `file://${tempDir('layout')}:v1`
    await pushImage({ store, id, remote, credentials: null })
    const into = join(tempDir('clone'), 'ws')
    const cloned = await cloneImage({ remote, into, credentials: null })
    expect(cloned.id).toBe(id)
    const out = join(tempDir('agent'), 'out')
    await checkoutAgent({ dir: into, id, into: out })
    expect(await fs.readFile(join(out, 'trace.jsonl'), 'utf8')).toBe(TRANSCRIPT)
    expect(await fs.readFile(join(out, 'world/a.txt'), 'utf8')).toBe('hi\n')
  })

  it('is refused by unpack and pull (exit 5, nothing kept) when a layer names an object of the wrong kind', async () => {
    for (const layer of ['trace', 'effects'] as const) {
      const { store, id } = await wrongKindImage(layer)
      const file = join(tempDir('pack'), 'bad.fpk')
      await packImage({ store, id, output: file })
      const other = await emptyStore()
      const before = await storeState(other)
      await expect(unpackImage({ store: other, input: file })).rejects.toMatchObject({ exitCode: 5 })
      const remote = `file://${tempDir('layout')}:v1`
      await pushImage({ store, id, remote, credentials: null }).catch(() => null)
      await expect(pullImage({ store: other, remote, credentials: null })).rejects.toMatchObject({ exitCode: 5 })
      expect(await storeState(other)).toEqual(before)
    }
  })

  it('keeps the layers objects through gc when only the image names them, and verify checks them', async () => {
    const { dir, store, id, ledger } = await fullImage()
    const snapshot = await readSnapshot(store, id)
    const runs = RunStore.open({ store })
    for (const run of runs.list()) await runs.remove(run.runId)
    runs.close()
    await gc({ store, prune: 'now' })
    expect(await store.has(snapshot.trace!)).toBe(true)
    expect(await store.has(ledger)).toBe(true)
    expect((await verify({ store })).ok).toBe(true)
    await fs.chmod(store.objectPath(snapshot.trace!), 0o644)
    await fs.writeFile(store.objectPath(snapshot.trace!), '{"kind":"run","tampered":true}')
    const result = await verify({ store })
    expect(result.problems).toContainEqual(expect.objectContaining({ type: 'corrupt', digest: snapshot.trace }))
    expect((await runCli(['verify'], { cwd: dir })).code).toBe(5)
  })
})
