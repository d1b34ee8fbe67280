import { realpathSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { fp, runCli, runCliInProcess } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

// Tests that call the CLI in-process (test/helpers/cli.ts) rely on it answering as bin/forkpoint does
// and leaving the test process as it was.

describe('the CLI in-process', () => {
  it('prints, and exits with, what bin/forkpoint does: output, --json, an error and a usage error', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    expect((await runCliInProcess(['init'], { cwd: dir })).code).toBe(0)
    expect((await runCliInProcess(['snapshot', '-m', 'one'], { cwd: dir })).code).toBe(0)
    for (const args of [['log'], ['status', '--json'], ['show', 'deadbeef'], ['show', 'deadbeef', '--json'], ['frobnicate']]) {
      const child = await fp(dir, ...args)
      expect(await runCliInProcess(args, { cwd: dir }), args.join(' ')).toEqual(child)
    }
  })

  it('colours only a terminal or FORCE_COLOR, never a pipe under CI, and NO_COLOR wins; in-process as spawned', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    expect((await runCliInProcess(['init'], { cwd: dir })).code).toBe(0)
    expect((await runCliInProcess(['snapshot', '-m', 'one'], { cwd: dir })).code).toBe(0)
    const log = (env: Record<string, string>) => runCli(['log'], { cwd: dir, env })
    const ESCAPE = '\u001b['
    expect((await log({ CI: '1', NO_COLOR: '' })).stdout).not.toContain(ESCAPE)
    expect((await log({ FORCE_COLOR: '1', NO_COLOR: '' })).stdout).toContain(ESCAPE)
    expect((await log({ FORCE_COLOR: '1', NO_COLOR: '1' })).stdout).not.toContain(ESCAPE)
    expect((await runCliInProcess(['log'], { cwd: dir, env: { FORCE_COLOR: '1', NO_COLOR: '' } })).stdout).toContain(ESCAPE)
    expect((await runCliInProcess(['log'], { cwd: dir, env: { CI: '1', NO_COLOR: '' } })).stdout).not.toContain(ESCAPE)
  })

  it('starts in its directory with the clean environment, and leaves directory, environment and exit code as they were', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    const cwd = process.cwd()
    const misleading = tempDir('other-store')
    process.env['FORKPOINT_STORE'] = misleading
    try {
      const init = await runCliInProcess(['init', '--json'], { cwd: dir })
      expect(init.code).toBe(0)
      expect(JSON.parse(init.stdout)).toMatchObject({ created: true, storeDir: `${realpathSync(dir)}/.forkpoint` })
      expect((await runCliInProcess(['status'], { cwd: dir, env: { FORKPOINT_STORE: misleading } })).code).toBe(2)
      expect(process.cwd()).toBe(cwd)
      expect(process.env['FORKPOINT_STORE']).toBe(misleading)
      expect(process.exitCode).toBeUndefined()
    } finally {
      delete process.env['FORKPOINT_STORE']
    }
  })

  it('runs concurrent calls one after the other, each in its own directory', async () => {
    const dirs = await Promise.all(['a', 'b', 'c'].map((name) => makeWorkspace({ [`${name}.txt`]: name })))
    const inits = await Promise.all(dirs.map((dir) => runCliInProcess(['init', '--json'], { cwd: dir })))
    expect(inits.map((r) => (JSON.parse(r.stdout) as { workspace: string }).workspace)).toEqual(dirs.map((dir) => realpathSync(dir)))
  })
})
