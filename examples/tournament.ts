/**
 * tournament: generate 5 slogans in parallel branches, then a judge compares them two by
 * two (shorter wins) until one remains; it is committed.   Run: npx tsx examples/tournament.ts
 */
import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Workspace, tournament } from '../src/index.js'
import { table, tempProject } from './workspace.js'

const SLOGANS = [
  'fork() for AI agents',
  'Branch your agent, keep the winner',
  'Explore in parallel, commit the best one',
  'Undo for agents',
  'Snapshots, branches and replays for every agent',
]
const project = await tempProject({ SLOGAN: '' })
try {
  const ws = await Workspace.open({ dir: project.dir })
  const slogan = (path: string) => readFileSync(join(path, 'SLOGAN'), 'utf8')
  const outcome = await tournament(
    async (path, attempt) => {
      await fs.writeFile(join(path, 'SLOGAN'), SLOGANS[attempt]!)
      return true
    },
    { n: SLOGANS.length, judge: (a, b) => (slogan(a).length <= slogan(b).length ? 0 : 1) },
  ).apply(ws)
  console.log(table(outcome.results, outcome.winner))
  for (const m of outcome.matches ?? []) console.log(`  round ${m.round}: #${m.a} v #${m.b} -> #${m.winner}`)
  console.log(`committed: ${outcome.committed} -> ${project.read('SLOGAN')}`)
} finally {
  project.done()
}
