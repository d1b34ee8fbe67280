/**
 * claudeCode: what `forkpoint claude install` gives a Claude Code session, offline. The
 * hooks it installs are run here as Claude Code runs them (the command from
 * `.claude/settings.json`, the event as JSON on stdin) for the events of a recorded
 * session that fixes the project's test: before and after each tool call the files go
 * onto the session's own line of images (HEAD stays), each call becomes a step of the
 * session's run, and Stop puts the run in the last image.   Run: npx tsx examples/adapters/claudeCode.ts
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { installClaudeHooks } from '../../src/adapters/claudeCode/index.js'
import { diffSnapshots, initWorkspace, loadRun, log, openStore, snapshotWorkspace } from '../../src/index.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { tempProject } from '../workspace.js'

const project = await tempProject()
try {
  const { dir } = project
  await initWorkspace({ dir })
  await snapshotWorkspace({ dir, message: 'before the session' })
  await installClaudeHooks({ dir })
  const settings = JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> }
  const hook = (event: Record<string, unknown>) => {
    const name = event['hook_event_name'] as string
    const command = settings.hooks[name]![0]!.hooks[0]!.command
    execFileSync('sh', ['-c', command], { cwd: dir, input: JSON.stringify({ session_id: 'demo', cwd: dir, ...event }) })
  }

  // the recorded session: Claude edits calc.js, runs the test, stops
  const edit = { tool_name: 'Edit', tool_use_id: 'toolu_1', tool_input: { file_path: join(dir, 'calc.js'), old_string: 'a - b', new_string: 'a + b' } }
  hook({ hook_event_name: 'PreToolUse', ...edit })
  writeFileSync(join(dir, 'calc.js'), project.read('calc.js').replace('a - b', 'a + b')) // what the tool did
  hook({ hook_event_name: 'PostToolUse', ...edit, tool_response: { filePath: join(dir, 'calc.js'), structuredPatch: [] } })
  const test = { tool_name: 'Bash', tool_use_id: 'toolu_2', tool_input: { command: 'node test.js' } }
  hook({ hook_event_name: 'PreToolUse', ...test })
  hook({ hook_event_name: 'PostToolUse', ...test, tool_response: { stdout: execFileSync('node', ['test.js'], { cwd: dir, encoding: 'utf8' }), stderr: '' } })
  hook({ hook_event_name: 'Stop', stop_hook_active: false })

  const { store } = await openStore({ dir })
  const images = await log({ store, from: 'refs/claude/demo' })
  for (const image of images) console.log(`image: ${image.message.replace(/ \(claude session .*\)$/, '')}`)
  const before = images.find((i) => i.message.startsWith('before Edit'))!
  const after = images.find((i) => i.message.startsWith('after Edit'))!
  const { changes } = await diffSnapshots({ store, a: before.id, b: after.id })
  console.log(`diff of the edit: ${changes.map((c) => `${c.path} ${c.status}`).join(', ')}`)
  const trace = (await readSnapshot(store, images[0]!.id)).trace!
  const run = await loadRun({ store, spec: (await store.readObject(trace, 'run'))['runId'] as string })
  console.log(`the session's run: ${run.steps.map((s) => `${s.type} ${s.name}`).join(', ')}`)
  console.log(`HEAD stays: ${(await log({ store, limit: 1 }))[0]!.message}`)
} finally {
  project.done()
}
