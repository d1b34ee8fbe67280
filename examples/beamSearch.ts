/**
 * beamSearch: spell a target word letter by letter; each node appends one letter in a
 * nested branch, the global top 2 across all beams survive each depth.
 * Run: npx tsx examples/beamSearch.ts
 */
import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Candidate, Workspace, beamSearch } from '../src/index.js'
import { table, tempProject } from './workspace.js'

const TARGET = 'fork'
const project = await tempProject({ 'word.txt': '' })
try {
  const ws = await Workspace.open({ dir: project.dir })
  const word = (path: string) => readFileSync(join(path, 'word.txt'), 'utf8')
  const letter =
    (c: string): Candidate =>
    async (path) => {
      await fs.writeFile(join(path, 'word.txt'), word(path) + c)
      return true
    }
  const evaluate = (path: string) => [...word(path)].filter((c, i) => TARGET[i] === c).length
  const outcome = await beamSearch([...'fdx'].map(letter), {
    expand: () => [...'okr'].map(letter),
    evaluate,
    beamWidth: 2,
    maxDepth: TARGET.length,
  }).apply(ws)
  console.log(
    table(
      outcome.results.filter((r) => r.status !== 'succeeded' || r.index === outcome.winner || r.depth === 1),
      outcome.winner,
    ),
  )
  console.log(`${outcome.results.length} nodes explored`)
  console.log(`committed: ${outcome.committed} -> ${project.read('word.txt')}`)
} finally {
  project.done()
}
