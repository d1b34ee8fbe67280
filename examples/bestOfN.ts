/**
 * bestOfN: the same scripted agent runs 6 times in parallel branches, each attempt
 * writing a differently sized summary; a grader scores each, the best is committed.
 * Run: npx tsx examples/bestOfN.ts
 */
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Workspace, bestOfN } from '../src/index.js'
import { table, tempProject } from './workspace.js'

const project = await tempProject({ 'notes.md': '# notes\n' })
try {
  const ws = await Workspace.open({ dir: project.dir })
  const words = ['forkpoint', 'branches', 'the', 'workspace', 'copy-on-write', 'and', 'commits', 'one', 'winner', 'back']
  const grade = (text: string) => 10 - Math.abs(text.split(' ').length - 7) // the ideal summary has 7 words
  const outcome = await bestOfN(
    async (path, attempt) => {
      const summary = words.slice(0, 3 + attempt).join(' ')
      await fs.appendFile(join(path, 'notes.md'), `${summary}\n`)
      return { success: true, score: grade(summary), value: summary }
    },
    { n: 6 },
  ).apply(ws)
  console.log(table(outcome.results, outcome.winner))
  console.log(`committed: ${outcome.committed} -> ${project.read('notes.md').split('\n')[1]}`)
} finally {
  project.done()
}
