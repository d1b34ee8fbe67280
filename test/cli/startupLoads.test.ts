import { readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { answerClaudeHook } from '../../src/adapters/claudeCode/answerHook.js'
import { startService } from '../../src/service/httpService.js'
import { CLI, ROOT, fpJson, runCli, runNode } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

/** Every CommonJS file `forkpoint ARGS` loaded (bundles, packages), relative to the repository's root (a file outside it by absolute path). */
async function loadedBy(args: string[], { cwd, input }: { cwd: string; input?: string }): Promise<string[]> {
  const dir = tempDir('loads')
  const preload = join(dir, 'record.cjs')
  const list = join(dir, 'loaded.txt')
  writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, Object.keys(require.cache).join('\\n')))\n`)
  const r = await runNode(['-r', preload, CLI, ...args], { cwd, ...(input === undefined ? {} : { input }) })
  expect(r.code, r.stderr).toBe(0)
  return readFileSync(list, 'utf8')
    .split('\n')
    .filter((file) => file !== preload)
    .map((file) => (file.startsWith(ROOT) ? relative(ROOT, file) : file))
}

const bundles = (files: string[]) => files.filter((f) => f.startsWith('dist/'))
const packages = (files: string[]) => [...new Set(files.flatMap((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1] ?? []))]

describe('what a start loads', () => {
  it('--version: no bundle and no package', async () => {
    const loaded = await loadedBy(['--version'], { cwd: tempDir('version') })
    expect([bundles(loaded), packages(loaded)]).toEqual([[], []])
  })

  it('a command of its own: the main bundle and no package (zod loads with the operation table)', async () => {
    const loaded = await loadedBy(['init', '--help'], { cwd: tempDir('help') })
    expect([bundles(loaded), packages(loaded)]).toEqual([['dist/cli/main.cjs'], []])
  })

  it("claude hook with no service: the client's bundle, then the hook's own, without the option parser's, zod, the HTTP capture or SQLite", async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    const event = { hook_event_name: 'PreToolUse', session_id: 'loads', cwd: ws, tool_name: 'Write', tool_input: {}, tool_use_id: 't1' }
    const loaded = await loadedBy(['claude', 'hook'], { cwd: ws, input: JSON.stringify(event) })
    expect(bundles(loaded)).toEqual(['dist/cli/hook.cjs', 'dist/cli/hook-in-process.cjs'])
    expect(packages(loaded)).toEqual(['ignore'])
  })

  it("claude hook with the store's service running: the client's bundle alone, and no package", async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    const service = await startService({ dir: ws, watch: false, claudeHook: answerClaudeHook })
    try {
      const event = { hook_event_name: 'PreToolUse', session_id: 'loads', cwd: ws, tool_name: 'Write', tool_input: {}, tool_use_id: 't1' }
      const loaded = await loadedBy(['claude', 'hook'], { cwd: ws, input: JSON.stringify(event) })
      expect([bundles(loaded), packages(loaded)]).toEqual([['dist/cli/hook.cjs'], []])
      expect((await fpJson<{ entries: unknown[] }>(ws, 'log', 'refs/claude/loads')).json.entries).toHaveLength(1) // the service made it
    } finally {
      await service.close()
    }
  })

  it("snapshot with the store's service running: the client's bundle alone, no package; the service made it and the output is the command line's", async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    const service = await startService({ dir: ws, watch: false })
    try {
      const loaded = await loadedBy(['snapshot', '-m', 'served'], { cwd: ws })
      expect([bundles(loaded), packages(loaded)]).toEqual([['dist/cli/snapshot.cjs'], []])
      writeFileSync(join(ws, 'b.txt'), 'b')
      const served = await runNode([CLI, 'snapshot', '--message=second', '--json'], { cwd: ws })
      expect(served.code, served.stderr).toBe(0)
      expect(JSON.parse(served.stdout)).toMatchObject({ schemaVersion: 1, created: true, files: 2, hashedFiles: 1 })
      const plain = await runNode([CLI, 'snapshot', '-mthird'], { cwd: ws, env: { NO_COLOR: '1' } })
      // b.txt, written a moment before the last scan, may be read again to be sure of it (racily clean)
      expect([plain.code, plain.stdout, plain.stderr]).toEqual([
        0,
        `${JSON.parse(served.stdout).id}\n`,
        expect.stringMatching(/^nothing changed since HEAD: 2 files, 2 B; read [01] \([01] B\)\n$/),
      ])
      const { json } = await fpJson<{ entries: Array<{ message: string }> }>(ws, 'log')
      expect(json.entries.map((e) => e.message)).toEqual(['second', 'served'])
    } finally {
      await service.close()
    }
  })

  it('snapshot with more than a message, or with no service: the whole command line', async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    expect(bundles(await loadedBy(['snapshot', '-m', 'alone'], { cwd: ws }))).toEqual(['dist/cli/snapshot.cjs', 'dist/cli/main.cjs'])
    const service = await startService({ dir: ws, watch: false })
    try {
      writeFileSync(join(ws, 'b.txt'), 'b')
      expect(bundles(await loadedBy(['snapshot', '-m', 'tagged', '--tag', 'v1'], { cwd: ws }))).toEqual(['dist/cli/snapshot.cjs', 'dist/cli/main.cjs'])
      const missing = await runNode([CLI, 'snapshot', '-m'], { cwd: ws })
      expect([missing.code, missing.stderr]).toEqual([2, expect.stringContaining("option '-m, --message <message>' argument missing")])
    } finally {
      await service.close()
    }
  })

  it("claude hook --help: the option parser's help, from the main bundle (not a hook waiting for its event)", async () => {
    const r = await runCli(['claude', 'hook', '--help'], { cwd: tempDir('hook-help') })
    expect([r.code, r.stdout.split('\n')[0]]).toEqual([0, 'Usage: forkpoint claude hook [options]'])
  })
})
