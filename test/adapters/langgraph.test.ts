import { Annotation, END, START, StateGraph } from '@langchain/langgraph'
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ForkpointSaver } from '../../src/adapters/langgraph/index.js'
import { ExitCode } from '../../src/errors/ForkpointError.js'
import { MalformedObjectError, UsageError } from '../../src/errors/index.js'
import { type Digest, checkout, diffSnapshots, log, pullImage, pushImage, snapshotWorkspace } from '../../src/index.js'
import { readRef, updateRef } from '../../src/store/refs.js'
import type { Store } from '../../src/store/Store.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { scanWorkspace } from '../../src/world/scan/scanWorkspace.js'
import { startService } from '../../src/service/httpService.js'
import { ROOT, fpJson, runNode } from '../helpers/cli.js'
import { serviceHealth } from '../helpers/serviceHealth.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

const State = Annotation.Root({
  steps: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  topic: Annotation<string>(),
})

/** A two-node agent that writes a file in its workspace at each step, as a coding agent does. */
function agentGraph(dir: string, saver: ForkpointSaver) {
  const draft = async (state: typeof State.State) => {
    await fs.writeFile(join(dir, 'draft.md'), `# ${state.topic}\n`)
    return { steps: [`draft ${state.topic}`] }
  }
  const review = async (state: typeof State.State) => {
    await fs.appendFile(join(dir, 'draft.md'), `reviewed after ${state.steps.length} step(s)\n`)
    return { steps: ['review'] }
  }
  return new StateGraph(State)
    .addNode('draft', draft)
    .addNode('review', review)
    .addEdge(START, 'draft')
    .addEdge('draft', 'review')
    .addEdge('review', END)
    .compile({ checkpointer: saver })
}

/** A thread's config; `durability: 'sync'` so each checkpoint is saved (its files scanned) before the next step runs. */
const thread = (thread_id: string) => ({ configurable: { thread_id }, durability: 'sync' as const })

/** A file of an image's world, or null when the image has no such file. */
async function fileIn(store: Store, image: Digest, path: string): Promise<string | null> {
  const into = join(tempDir('image'), 'world')
  await checkout({ store, id: image, into })
  return fs.readFile(join(into, path), 'utf8').catch(() => null)
}

async function stateHistory(graph: ReturnType<typeof agentGraph>, threadId: string) {
  const states = []
  for await (const state of graph.getStateHistory(thread(threadId))) states.push(state)
  return states
}

describe('ForkpointSaver with a real LangGraph graph', () => {
  it('keeps each checkpoint in an image of its own with the files as the graph left them; a new saver resumes the thread', async () => {
    const { dir, store } = await storeWorkspace({ 'README.md': 'project\n' })
    const base = await snapshotWorkspace({ dir, store })
    const out = await agentGraph(dir, new ForkpointSaver({ dir, store })).invoke({ topic: 'forks' }, thread('essay'))
    expect(out.steps).toEqual(['draft forks', 'review'])

    // a saver that knows nothing yet reads the thread from the store
    const graph = agentGraph(dir, new ForkpointSaver({ dir, store }))
    const states = await stateHistory(graph, 'essay')
    expect(states.map((s) => s.values['steps'])).toEqual([['draft forks', 'review'], ['draft forks'], [], []])
    const head = (await readRef(store, 'refs/threads/essay'))!
    expect(await fileIn(store, head, 'draft.md')).toBe('# forks\nreviewed after 1 step(s)\n')
    expect(await fileIn(store, head, 'README.md')).toBe('project\n')

    // the images form the thread's history; the first stands on the workspace's HEAD
    const images = await log({ store, from: 'refs/threads/essay' })
    expect(images.some((i) => i.message.startsWith('checkpoint ') && i.message.endsWith('of thread essay'))).toBe(true)
    expect(images.slice(0, -1).every((i) => i.agent === 'langgraph')).toBe(true)
    expect(images.at(-1)!.id).toBe(base.id)

    const again = await graph.invoke({ topic: 'merges' }, thread('essay'))
    expect(again.steps).toEqual(['draft forks', 'review', 'draft merges', 'review'])
  })

  it("asks a running service for the workspace's files, which its watcher knows without a scan", async () => {
    const { dir, store } = await storeWorkspace({ 'README.md': 'project\n' })
    const service = await startService({ dir })
    try {
      const out = await agentGraph(dir, new ForkpointSaver({ dir, store })).invoke({ topic: 'served' }, thread('served'))
      expect(out.steps).toEqual(['draft served', 'review'])
      const health = await serviceHealth(service.address)
      expect(health).toMatchObject({ scan: 'warm' })
      expect(health['served']).toBeGreaterThanOrEqual(3) // a scan for each checkpoint the graph saved
      const head = (await readRef(store, 'refs/threads/served'))!
      expect(await fileIn(store, head, 'draft.md')).toBe('# served\nreviewed after 1 step(s)\n')
      expect((await readSnapshot(store, head)).world.tree).toBe((await scanWorkspace({ store, dir, write: false, respectGitignore: false })).tree)
    } finally {
      await service.close()
    }
  })

  it('forks a thread: each fork goes on alone from the thread image, files and checkpoints, and the thread stays as it was', async () => {
    const { dir, store } = await storeWorkspace({})
    const saver = new ForkpointSaver({ dir, store })
    await agentGraph(dir, saver).invoke({ topic: 'base' }, thread('t'))
    const before = await readRef(store, 'refs/threads/t')

    const forks = await saver.forkThread('t', { n: 2 })
    expect(forks.map((f) => f.threadId)).toEqual(['t-fork-0', 't-fork-1'])
    for (const fork of forks) expect((await readSnapshot(store, fork.image)).parents).toEqual([before])

    const graph = agentGraph(dir, saver)
    const one = await graph.invoke({ topic: 'left' }, thread('t-fork-0'))
    const two = await graph.invoke({ topic: 'right' }, thread('t-fork-1'))
    expect(one.steps).toEqual(['draft base', 'review', 'draft left', 'review'])
    expect(two.steps).toEqual(['draft base', 'review', 'draft right', 'review'])
    expect(await readRef(store, 'refs/threads/t')).toBe(before)
    expect((await graph.getState(thread('t'))).values['steps']).toEqual(['draft base', 'review'])

    const [left, right] = [(await readRef(store, 'refs/threads/t-fork-0'))!, (await readRef(store, 'refs/threads/t-fork-1'))!]
    const diff = await diffSnapshots({ store, a: left, b: right })
    expect(diff.changes.map((c) => [c.path, c.status])).toEqual([['draft.md', 'modified']])
    await expect(saver.forkThread('t', { n: 1 })).resolves.toEqual([expect.objectContaining({ threadId: 't-fork-2' })])
    // the thread goes on, and is forked again: the fork names go on from the free ones, not from its new image's count
    await graph.invoke({ topic: 'more' }, thread('t'))
    expect((await saver.forkThread('t', { n: 2 })).map((f) => f.threadId)).toEqual(['t-fork-3', 't-fork-4'])
  })

  it('forks from an earlier checkpoint: the fork starts from that checkpoint and the files of that moment', async () => {
    const { dir, store } = await storeWorkspace({})
    const saver = new ForkpointSaver({ dir, store })
    const graph = agentGraph(dir, saver)
    await graph.invoke({ topic: 'plan' }, thread('t'))
    const drafted = (await stateHistory(graph, 't')).find((s) => s.next[0] === 'review')!
    const checkpointId = drafted.config.configurable!['checkpoint_id'] as string

    const [fork] = await saver.forkThread('t', { n: 1, checkpointId })
    expect(await fileIn(store, fork!.image, 'draft.md')).toBe('# plan\n')
    const state = await graph.getState(thread(fork!.threadId))
    expect(state.values['steps']).toEqual(['draft plan'])
    expect(state.next).toEqual(['review'])
    // going on runs the step that was next at that checkpoint
    expect((await graph.invoke(null, thread(fork!.threadId))).steps).toEqual(['draft plan', 'review'])

    await expect(saver.forkThread('t', { n: 1, checkpointId: 'no-such-checkpoint' })).rejects.toThrow(UsageError)
    await expect(saver.forkThread('nobody', { n: 1 })).rejects.toThrow(/no thread "nobody"/)
  })

  it('time travel inside one thread: resuming from an earlier checkpoint branches the thread, as LangGraph does', async () => {
    const { dir, store } = await storeWorkspace({})
    const graph = agentGraph(dir, new ForkpointSaver({ dir, store, captureWorkspace: false }))
    await graph.invoke({ topic: 'one' }, thread('t'))
    const drafted = (await stateHistory(graph, 't')).find((s) => s.next[0] === 'review')!
    const replayed = await graph.invoke(null, drafted.config)
    expect(replayed.steps).toEqual(['draft one', 'review'])
    const history = await stateHistory(graph, 't')
    const byId = new Map(history.map((s) => [s.config.configurable!['checkpoint_id'] as string, s]))
    const chain: string[] = []
    for (let at: string | undefined = history[0]!.config.configurable!['checkpoint_id']; at; at = byId.get(at)?.parentConfig?.configurable?.['checkpoint_id']) chain.push(at)
    expect(chain).toContain(drafted.config.configurable!['checkpoint_id'])
    expect(history.filter((s) => s.next.length === 0)).toHaveLength(2) // the first ending is kept beside the new one
  })

  it('keeps each branch of a thread its own values: an update at an old checkpoint does not change the checkpoints after it', async () => {
    const { dir, store } = await storeWorkspace({})
    const graph = agentGraph(dir, new ForkpointSaver({ dir, store, captureWorkspace: false }))
    await graph.invoke({ topic: 'one' }, thread('t'))
    const history = await stateHistory(graph, 't')
    const [ending, drafted] = [history[0]!, history.find((s) => s.next[0] === 'review')!]
    // LangGraph gives the edited channel the same version number the old ending's step gave it
    await graph.updateState(drafted.config, { steps: ['EDITED'] })
    expect((await graph.getState(ending.config)).values['steps']).toEqual(['draft one', 'review'])
    expect((await graph.getState(thread('t'))).values['steps']).toEqual(['draft one', 'EDITED'])
    // and a saver that reads it all from the store agrees
    const fresh = agentGraph(dir, new ForkpointSaver({ dir, store }))
    expect((await fresh.getState(ending.config)).values['steps']).toEqual(['draft one', 'review'])
  })

  it('travels: a thread pushed to a registry and pulled into another store goes on there', async () => {
    const { dir, store } = await storeWorkspace({ 'notes.md': 'n\n' })
    await agentGraph(dir, new ForkpointSaver({ dir, store })).invoke({ topic: 'travel' }, thread('t'))
    const remote = `file://${tempDir('layout')}:essay`
    await pushImage({ store, id: 'refs/threads/t', remote, credentials: null })

    const elsewhere = await storeWorkspace({})
    const { id } = await pullImage({ store: elsewhere.store, remote, credentials: null })
    const saver = new ForkpointSaver({ dir: elsewhere.dir, store: elsewhere.store })
    await saver.threadFrom('t', id)
    await expect(saver.threadFrom('t', id)).rejects.toThrow(/already exists/)
    const out = await agentGraph(elsewhere.dir, saver).invoke({ topic: 'home' }, thread('t'))
    expect(out.steps).toEqual(['draft travel', 'review', 'draft home', 'review'])
    const plain = await snapshotWorkspace({ dir: elsewhere.dir, store: elsewhere.store })
    await expect(saver.threadFrom('u', plain.id)).rejects.toThrow(/no checkpoints layer/)
  })

  it('names any thread id: ones a ref cannot spell are kept in hex and listed back as they were', async () => {
    const { dir, store } = await storeWorkspace({})
    const saver = new ForkpointSaver({ dir, store, captureWorkspace: false })
    const ids = ['user/42 ünï', '.hidden', 'x..y', 'a.lock', 'plain-id_1.2', 'x.append']
    for (const id of ids) await saver.put(thread(id), { ...emptyCheckpoint(), id: `c-${ids.indexOf(id)}` }, { source: 'input', step: -1, parents: {} }, {})
    const listed = []
    for await (const tuple of saver.list({})) listed.push(tuple.config.configurable!['thread_id'])
    expect(listed.sort()).toEqual([...ids].sort())
    expect(await readRef(store, 'refs/threads/plain-id_1.2')).not.toBeNull()
    await expect(saver.put(thread('x'.repeat(500)), emptyCheckpoint(), { source: 'input', step: -1, parents: {} }, {})).rejects.toThrow(UsageError)

    // a lone surrogate has no UTF-8 of its own: refused, not folded into U+FFFD with others
    await expect(saver.put(thread('a\ud800'), emptyCheckpoint(), { source: 'input', step: -1, parents: {} }, {})).rejects.toThrow(/lone UTF-16 surrogate/)
    // a ref under refs/threads/ that no thread id makes is not listed as a thread
    await updateRef({ store, name: 'refs/threads/_zz', id: (await saver.threadImage('.hidden'))!, message: 'by hand' })
    const again = []
    for await (const tuple of saver.list({})) again.push(tuple.config.configurable!['thread_id'])
    expect(again.sort()).toEqual([...ids].sort())

    await saver.deleteThread('user/42 ünï')
    expect(await saver.getTuple(thread('user/42 ünï'))).toBeUndefined()
    expect(await saver.getTuple(thread('.hidden'))).toBeDefined()
  })

  it('refuses bad configs with usage errors (exit 2) and a corrupt history with exit 5', async () => {
    const { dir, store } = await storeWorkspace({})
    const saver = new ForkpointSaver({ dir, store, captureWorkspace: false })
    const meta = { source: 'input' as const, step: -1, parents: {} }
    const refused = async (p: Promise<unknown>) => {
      const err = await p.then(
        () => null,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(UsageError)
      expect((err as UsageError).exitCode).toBe(ExitCode.usage)
      return (err as Error).message
    }
    expect(await refused(saver.put({ configurable: {} }, emptyCheckpoint(), meta, {}))).toMatch(/no thread_id/)
    expect(await refused(saver.put({ configurable: { thread_id: 7 } }, emptyCheckpoint(), meta, {}))).toMatch(/thread_id must be a non-empty string \(got number\)/)
    expect(await refused(saver.put({ configurable: { thread_id: 't', checkpoint_ns: ['a'] } }, emptyCheckpoint(), meta, {}))).toMatch(/checkpoint_ns must be a string/)
    expect(await refused(saver.put(thread('t'), { ...emptyCheckpoint(), id: '' }, meta, {}))).toMatch(/checkpoint.id must be a non-empty string/)
    expect(await refused(saver.putWrites(thread('t'), [['c', 1]], 'task'))).toMatch(/checkpoint_id must be a non-empty string/)
    expect(await readRef(store, 'refs/threads/t')).toBeNull()

    // a thread whose history object was replaced by a hand-made one with a broken entry
    await saver.put(thread('t'), emptyCheckpoint(), meta, {})
    const image = await readSnapshot(store, (await readRef(store, 'refs/threads/t'))!)
    const bad = await store.writeObject({ kind: 'checkpoint-log', schemaVersion: 1, framework: 'langgraph', previous: null, entry: { op: 'put', ns: '', id: 'x' } })
    await updateRef({ store, name: 'refs/threads/t', id: await store.writeObject({ ...image, checkpoints: bad }), message: 'test' })
    const fresh = new ForkpointSaver({ dir, store })
    const err = await fresh.getTuple(thread('t')).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(MalformedObjectError)
    expect((err as MalformedObjectError).exitCode).toBe(ExitCode.corrupt)
  })

  it('loses no step when two savers in one process write one thread at once', async () => {
    const { dir, store } = await storeWorkspace({})
    const meta = { source: 'loop' as const, step: 0, parents: {} }
    const savers = [new ForkpointSaver({ dir, store, captureWorkspace: false }), new ForkpointSaver({ dir, store, captureWorkspace: false })]
    await Promise.all(
      savers.map((saver, s) =>
        Promise.all(
          Array.from({ length: 15 }, (_, i) =>
            saver.put({ configurable: { thread_id: 't', checkpoint_ns: `ns${s}` } }, { ...emptyCheckpoint(), id: `${s}-${String(i).padStart(2, '0')}` }, meta, {}),
          ),
        ),
      ),
    )
    const ids = []
    for await (const tuple of new ForkpointSaver({ dir, store }).list(thread('t'))) ids.push(tuple.checkpoint.id)
    expect(ids.sort()).toHaveLength(30)
  })

  it('loses no step when two processes write one thread at once, each scanning the workspace', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const helper = fileURLToPath(new URL('../helpers/langgraphPuts.ts', import.meta.url))
    const results = await Promise.all(['left', 'right'].map((ns) => runNode(['--import', 'tsx', helper, dir, ns, '12'], { cwd: ROOT })))
    expect(results.map((r) => [r.code, r.stderr])).toEqual([
      [0, ''],
      [0, ''],
    ])
    const ids = []
    for await (const tuple of new ForkpointSaver({ dir, store }).list(thread('t'))) ids.push(tuple.checkpoint.id)
    expect(ids).toHaveLength(24)
    // one image per step, each on the one before: the thread's line has no gap and no fork
    expect((await log({ store, from: 'refs/threads/t' })).filter((i) => i.agent === 'langgraph')).toHaveLength(24)
  })

  it('the CLI sees a thread as an image: log and show name its checkpoints layer', async () => {
    const { dir, store } = await storeWorkspace({})
    await agentGraph(dir, new ForkpointSaver({ dir, store })).invoke({ topic: 'cli' }, thread('t'))
    const shown = await fpJson<{ layers: Array<{ layer: string; kind: string }> }>(dir, 'show', 'refs/threads/t', '--json')
    expect(shown.code).toBe(0)
    expect(shown.json.layers).toContainEqual(expect.objectContaining({ layer: 'checkpoints', kind: 'checkpoint-log' }))
  })
})
