/**
 * reflexion: a scripted agent guesses a fix, runs the test in its branch, and on failure
 * the critique (the test's output) is fed into its next attempt in a fresh branch.
 * Run: npx tsx examples/reflexion.ts
 */
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Workspace, reflexion } from '../src/index.js'
import { table, tempProject } from './workspace.js'

const project = await tempProject()
try {
  const ws = await Workspace.open({ dir: project.dir })
  const outcome = await reflexion(
    async (path, attempt, signal, { branch, feedback }) => {
      // The "agent": without feedback it guesses multiplication; told the sum is expected, it adds.
      const expr = feedback?.includes('expected 5') ? 'a + b' : 'a * b'
      await fs.writeFile(join(path, 'calc.js'), `export function add(a, b) {\n  return ${expr}\n}\n`)
      const test = await branch.run('node test.js', { signal })
      return { success: test.exitCode === 0, value: test.stderr.trim() }
    },
    { maxRetries: 3, critique: (result) => `the test failed: ${String(result.value)}` },
  ).apply(ws)
  console.log(table(outcome.results, outcome.winner))
  for (const r of outcome.results) if (r.feedback) console.log(`  #${r.index} was told: ${r.feedback}`)
  console.log(`committed: ${outcome.committed} -> ${project.read('calc.js').split('\n')[1]!.trim()}`)
} finally {
  project.done()
}
