import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Recorder, Store, Workspace, bestOfN, checkout, createTag, forkImage, initWorkspace, merge, openEffects, snapshotAgent } from '../../src/index.js'
import type { Digest } from '../../src/objects/digest.js'
import { updateRef } from '../../src/store/refs.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { fileEntry, treeObject } from '../../src/objects/Tree.js'

/** The hostile names and values the page must show as text. */
export const HOSTILE_FILE = '<script>alert(1)<script>.js'
export const HOSTILE_OUTPUT = '<img src=x onerror="document.title=`pwned`"><b>bold?</b>'

export interface UiStore {
  dir: string
  runs: { a: string; b: string }
  images: { base: string; left: string; right: string; merge: string }
}

/** Record a small agent run through the library; `answer` is the search tool's output (where run b diverges from a). */
async function recordRun(dir: string, answer: string): Promise<string> {
  const rec = await Recorder.start({ entrypoint: 'ui-agent', dir, env: {} })
  const question = await rec.input('question', () => 'what is in the store?')
  await rec.llm('plan', { question, apiKey: 'sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz0123456789' }, () => ({ plan: ['search', 'answer'] }))
  const found = await rec.tool('search', { query: 'store' }, () => ({ html: answer }))
  await rec.output('answer', { text: `found ${JSON.stringify(found)}` })
  const done = await rec.finish()
  if (done.kind !== 'recorded') throw new Error('expected a recorded run')
  return done.run.runId
}

/**
 * A real store for the web view, in the empty directory `dir`: a base image (a file named like a script tag, a run whose
 * output is HTML, a ledger of one email sent), a fork of it, two lines of work from it merged back, and a best-of-3
 * exploration with scores and a winner.
 */
export async function makeUiStore(dir: string): Promise<UiStore> {
  await fs.mkdir(join(dir, 'src'), { recursive: true })
  await fs.writeFile(join(dir, 'README.md'), '# agent\n')
  await fs.writeFile(join(dir, 'src/main.js'), 'console.log(1)\n')
  await fs.writeFile(join(dir, 'src', HOSTILE_FILE), 'not a script\n')
  await initWorkspace({ dir })
  const a = await recordRun(dir, HOSTILE_OUTPUT)
  const effects = await openEffects({ dir, env: {} })
  const send = effects.tool('email.send', (mail: { id: string; to: string }) => ({ sent: mail.id }), { class: 'irreversible', key: (mail) => mail.id })
  await send({ id: 'm-1', to: '<b>ops@example.com</b>' })
  const base = await snapshotAgent({ dir, message: 'base: the agent starts', trace: a, effects: await effects.ledger() })
  await forkImage({ dir, id: base.id, n: 2 })
  await createTag({ dir, name: 'start', id: base.id })
  await fs.writeFile(join(dir, 'notes.md'), 'left line of work\n')
  const left = await snapshotAgent({ dir, message: 'left: notes', trace: false })
  await checkout({ dir, id: 'start' })
  const b = await recordRun(dir, '<i>a different answer</i>')
  await fs.writeFile(join(dir, 'src/main.js'), 'console.log(2)\n')
  const right = await snapshotAgent({ dir, message: 'right: main.js changed', trace: b })
  await createTag({ dir, name: 'right', id: right.id })
  await checkout({ dir, id: left.id })
  const merged = await merge({ dir, from: 'right' })
  if (merged.outcome !== 'merged') throw new Error(`expected a merge, got ${merged.outcome}`)
  const ws = await Workspace.open({ dir })
  await bestOfN((_path, attempt) => ({ success: attempt !== 2, score: attempt * 10 }), { n: 3, isolate: false }).apply(ws)
  return { dir, runs: { a, b }, images: { base: base.id, left: left.id, right: right.id, merge: merged.id } }
}

/**
 * A long history written straight into a new store in `dir` (fast enough for 10,000): a
 * main line on `main`, with a side image every `mergeEvery` merged into the next main one;
 * each image's tree holds a shared file and one of its own.
 */
export async function writeImageHistory(dir: string, count: number, mergeEvery: number): Promise<void> {
  const { storeDir } = await initWorkspace({ dir })
  const store = await Store.open(storeDir)
  const shared = await store.writeBlob(Buffer.from('shared\n'))
  const start = Date.UTC(2026, 0, 1)
  let made = 0
  const write = async (parents: Digest[], message: string): Promise<Digest> => {
    const own = await store.writeBlob(Buffer.from(`${message}\n`))
    const { bytes, digest } = treeObject([fileEntry('own.txt', false, message.length + 1, own, false), fileEntry('shared.txt', false, 7, shared, false)])
    await store.writeVerified(digest, bytes)
    return store.writeObject(makeSnapshot({ parents, tree: digest, message, createdAt: new Date(start + made++ * 1000) }))
  }
  let tip = await write([], 'root')
  let side: Digest | null = null
  while (made < count) {
    tip = await write(side ? [tip, side] : [tip], `main ${made}`)
    side = made % mergeEvery === 0 && made + 1 < count ? await write([tip], `side ${made}`) : null
  }
  await updateRef({ store, name: 'refs/heads/main', id: tip, message: 'a written history' })
}
