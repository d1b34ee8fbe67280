/**
 * speculate: three scripted "agents" propose patches for a failing test, as sandboxed
 * shell commands in parallel branches. The first whose `node test.js` passes is
 * committed; the others are killed and thrown away.   Run: npx tsx examples/speculate.ts
 */
import { Workspace, speculate } from '../src/index.js'
import { table, tempProject } from './workspace.js'

const project = await tempProject()
try {
  const ws = await Workspace.open({ dir: project.dir })
  const patch = (expr: string) => `sed -i 's/return a - b/return ${expr}/' calc.js && node test.js`
  const outcome = await speculate([patch('a * b'), patch('a + b'), `sleep 30; ${patch('b + a')}`], { timeout: '20s', maxParallel: 3 }).apply(ws)
  console.log(table(outcome.results, outcome.winner))
  console.log(`committed: ${outcome.committed} -> ${project.read('calc.js').split('\n')[1]!.trim()}`)
} finally {
  project.done()
}
