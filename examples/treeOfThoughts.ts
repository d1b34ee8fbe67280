/**
 * treeOfThoughts: three plans for a config file; the best is expanded into refinements
 * in nested branches, level by level; the best node's whole path is committed.
 * Run: npx tsx examples/treeOfThoughts.ts
 */
import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Candidate, Workspace, treeOfThoughts } from '../src/index.js'
import { table, tempProject } from './workspace.js'

const project = await tempProject({ 'config.ini': '' })
try {
  const ws = await Workspace.open({ dir: project.dir })
  const setting =
    (line: string): Candidate =>
    async (path) => {
      await fs.appendFile(join(path, 'config.ini'), `${line}\n`)
      return true
    }
  const wanted = ['cache=on', 'workers=4', 'retries=3'] // what the "evaluator" knows is good
  const evaluate = (path: string) =>
    readFileSync(join(path, 'config.ini'), 'utf8')
      .split('\n')
      .filter((l) => wanted.includes(l)).length
  const outcome = await treeOfThoughts([setting('cache=off'), setting('cache=on'), setting('workers=1')], {
    expand: ({ depth }) => (depth === 1 ? [setting('workers=1'), setting('workers=4')] : [setting('retries=0'), setting('retries=3')]),
    evaluate,
    maxDepth: 3,
  }).apply(ws)
  console.log(table(outcome.results, outcome.winner))
  console.log(`committed: ${outcome.committed} -> ${project.read('config.ini').trim().split('\n').join(', ')}`)
} finally {
  project.done()
}
