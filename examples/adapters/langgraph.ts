/**
 * langgraph: a LangGraph.js agent that fixes a bug in a small project, with forkpoint as its
 * checkpointer. Each checkpoint is an image holding the thread's state and the project's
 * files; the thread is forked into two attempts that go on alone (one operator each), and the
 * two forks' images are diffed. (No model is involved, so this runs offline.)
 * Run: npx tsx examples/adapters/langgraph.ts
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph'
import { spawnSync } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { ForkpointSaver } from '../../src/adapters/langgraph/index.js'
import { checkout, diffSnapshots, initWorkspace, snapshotWorkspace } from '../../src/index.js'
import { tempProject } from '../workspace.js'

const project = await tempProject()
const { dir } = project
await initWorkspace({ dir })
await snapshotWorkspace({ dir, message: 'the project as it was' })

const State = Annotation.Root({ operator: Annotation<string>(), notes: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) })
const graph = new StateGraph(State)
  .addNode('plan', async () => {
    await fs.writeFile(join(dir, 'PLAN.md'), 'add() returns the wrong sum: try operators\n')
    return { notes: ['planned'] }
  })
  .addNode('fix', async (state) => {
    if (!state.operator) return {}
    await fs.writeFile(join(dir, 'calc.js'), `export function add(a, b) {\n  return a ${state.operator} b\n}\n`)
    const test = spawnSync(process.execPath, ['test.js'], { cwd: dir })
    return { notes: [`${state.operator}: test ${test.status === 0 ? 'passed' : 'failed'}`] }
  })
  .addEdge(START, 'plan')
  .addEdge('plan', 'fix')
  .addEdge('fix', END)
  .compile({ checkpointer: new ForkpointSaver({ dir }) })
const thread = (thread_id: string) => ({ configurable: { thread_id }, durability: 'sync' as const })
const notesOf = (state: { values: unknown }) => (state.values as typeof State.State).notes.join(', ')

await graph.invoke({}, thread('fix-add'))
const saver = new ForkpointSaver({ dir })
console.log(`thread fix-add: ${notesOf(await graph.getState(thread('fix-add')))}`)

const forks = await saver.forkThread('fix-add', { n: 2 })
for (const [fork, operator] of forks.map((f, i) => [f, ['*', '+'][i]!] as const)) {
  // the fork's files into the workspace (force: what is there now is already in the thread's image), then on from its checkpoint
  await checkout({ dir, id: fork.image, force: true })
  const state = await graph.invoke({ operator }, thread(fork.threadId))
  console.log(`${fork.threadId}: ${state.notes.at(-1)}`)
}
const [left, right] = await Promise.all(forks.map(async (f) => (await saver.threadImage(f.threadId))!))
const diff = await diffSnapshots({ dir, a: left!, b: right! })
console.log(`diff of the forks: ${diff.changes.map((c) => `${c.path} ${c.status}`).join(', ')}`)
console.log(`fix-add itself: ${notesOf(await graph.getState(thread('fix-add')))}`)
project.done()
