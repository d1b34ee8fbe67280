import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runProgram } from '../helpers/cli.js'
import { type PackedInstall, packAndInstall } from '../helpers/packedInstall.js'
import { serviceHealth } from '../helpers/serviceHealth.js'
import { tempDir } from '../helpers/tmp.js'

const MB = 1e6

describe('the package as a user installs it (npm pack, then npm i of the tarball into an empty project)', () => {
  let installed: PackedInstall
  beforeAll(async () => {
    installed = await packAndInstall(tempDir('packed'))
    console.log(
      `packed install: ${installed.packages} packages, ${(installed.bytes / MB).toFixed(1)} MB of files in node_modules (${(installed.diskBytes / MB).toFixed(1)} MB on disk), tarball ${(installed.tarballBytes / MB).toFixed(1)} MB, npm i ${(installed.installMs / 1000).toFixed(1)} s`,
    )
  }, 600_000)
  const npx = (...args: string[]) => runProgram(['npx', '--no', 'forkpoint', ...args], { cwd: installed.project })

  it('needs no C compiler: forkpoint uses its prebuilt parts, its dependencies their published binaries', () => {
    expect(spawnSync('cc', ['--version'], { env: { PATH: installed.noCompilerPath } }).error).toMatchObject({ code: 'ENOENT' })
    expect(spawnSync('gcc', ['--version'], { env: { PATH: installed.noCompilerPath } }).error).toMatchObject({ code: 'ENOENT' })
    const forkpoint = join(installed.project, 'node_modules', 'forkpoint')
    expect(existsSync(join(forkpoint, 'prebuilds', `linux-${process.arch}`, 'forkpoint-sandbox'))).toBe(true)
    expect(existsSync(join(forkpoint, 'build'))).toBe(false)
    expect(installed.mirrored.sort()).toEqual([expect.stringMatching(/^better-sqlite3-v/), expect.stringMatching(/^zstd-napi-v/)])
  })

  it('leaves out what a user may not need: the optional integrations and the source maps', () => {
    for (const name of ['@aws-sdk/client-s3', 'bullmq', 'ioredis', '@parcel/watcher', '@modelcontextprotocol/sdk'])
      expect(existsSync(join(installed.project, 'node_modules', name)), name).toBe(false)
    expect(existsSync(join(installed.project, 'node_modules', 'forkpoint', 'dist', 'cli', 'main.cjs.map'))).toBe(false)
    expect(installed.packages).toBeLessThanOrEqual(60)
    expect(installed.bytes).toBeLessThanOrEqual(40 * MB)
  })

  it('runs forkpoint demo', async () => {
    // with this machine's PATH: the demo's sandboxes see /usr, not the install's PATH directory under /tmp
    const r = await npx('demo')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/demo finished in/)
  })

  it('names the npm i that adds an optional integration it does not have', async () => {
    const r = await npx('mcp')
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(
      "the MCP server (forkpoint mcp) needs @modelcontextprotocol/sdk@^1.32.2, which this project has not installed: npm i '@modelcontextprotocol/sdk@^1.32.2'",
    )
  })

  it('serves without the file watcher, each snapshot scanning in full, and says what to install for it', async () => {
    const ws = join(installed.project, 'ws')
    mkdirSync(ws)
    expect((await runProgram(['npx', '--no', 'forkpoint', 'init'], { cwd: ws })).code).toBe(0)
    const child = spawn(join(installed.project, 'node_modules', '.bin', 'forkpoint'), ['serve', '--json'], { cwd: ws, stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      const { address } = await new Promise<{ address: string }>((resolve) => child.stdout.once('data', (line: Buffer) => resolve(JSON.parse(line.toString()))))
      expect(await serviceHealth(address)).toMatchObject({ ok: true, scan: expect.stringContaining("npm i '@parcel/watcher@^2.6.0'") })
    } finally {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
  })
})
