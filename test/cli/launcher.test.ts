import { existsSync, promises as fs, readdirSync, symlinkSync } from 'node:fs'
import Module from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI, runCli } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

// A certificate file that does not exist: Node warns, naming it, whenever a process loads NODE_EXTRA_CA_CERTS.
const CERTS = '/nonexistent/forkpoint-test-ca.pem'
const LOADED = `Ignoring extra certs from \`${CERTS}\``
const withCerts = { NODE_EXTRA_CA_CERTS: CERTS }

describe('bin/forkpoint', () => {
  it('starts local commands without loading NODE_EXTRA_CA_CERTS, and gives it back to the processes they start', async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    for (const args of [['init'], ['snapshot'], ['status'], ['log']]) {
      const r = await runCli(args, { cwd: ws, env: withCerts })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).not.toContain(LOADED)
    }
    const child = await runCli(['run', '--', 'sh', '-c', 'printf "%s|%s" "$NODE_EXTRA_CA_CERTS" "${FORKPOINT_DEFERRED_CA_CERTS-unset}"'], { cwd: ws, env: withCerts })
    expect(child.code, child.stderr).toBe(0)
    expect(child.stdout).toBe(`${CERTS}|unset`)
  })

  it('runs a command that opens HTTPS connections again, in a Node that loaded them: same output and exit code, -C resolved once', async () => {
    const parent = tempDir('launch')
    const ws = await makeWorkspace({ 'a.txt': 'a' }, join(parent, 'ws'))
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    expect((await runCli(['snapshot'], { cwd: ws })).code).toBe(0)
    const layout = join(parent, 'layout')

    const pushed = await runCli(['-C', 'ws', 'push', 'HEAD', `file://${layout}:v1`], { cwd: parent, env: withCerts })
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(pushed.stderr.split(LOADED)).toHaveLength(2) // loaded once: by the rerun, not by the first start
    expect(pushed.stdout).toContain(`pushed`)
    expect(existsSync(join(layout, 'index.json'))).toBe(true)

    const failed = await runCli(['-C', 'ws', 'push', 'no-such-ref', `file://${layout}:v2`], { cwd: parent, env: withCerts })
    const plain = await runCli(['-C', 'ws', 'push', 'no-such-ref', `file://${layout}:v2`], { cwd: parent })
    expect(failed.code).toBe(plain.code)
    expect(failed.code).not.toBe(0)
    expect(failed.stderr.replace(/.*Ignoring extra certs.*\n/, '')).toBe(plain.stderr)

    // recording through the proxy forwards requests from this process; recording in-process does not
    const proxied = await runCli(['run', '--record', '--proxy', '--', 'sh', '-c', 'true'], { cwd: ws, env: withCerts })
    expect(proxied.code, proxied.stderr).toBe(0)
    expect(proxied.stderr.split(LOADED)).toHaveLength(2)
    const inProcess = await runCli(['run', '--record', '--', 'sh', '-c', 'true'], { cwd: ws, env: withCerts })
    expect(inProcess.code, inProcess.stderr).toBe(0)
    expect(inProcess.stderr).not.toContain(LOADED)
  })

  it('works through a symlink, as npm installs it', async () => {
    const bin = join(tempDir('bin'), 'forkpoint')
    symlinkSync(CLI, bin)
    const { spawnSync } = await import('node:child_process')
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('keeps a compile cache in $XDG_CACHE_HOME, and starts right from a garbled or unwritable one', async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    const cache = tempDir('cache')
    const env = { XDG_CACHE_HOME: cache }
    const first = await runCli(['init', '--json'], { cwd: ws, env })
    expect(first.code, first.stderr).toBe(0)
    const dir = join(cache, 'forkpoint')
    expect(existsSync(dir)).toBe(true)
    if ((Module as { enableCompileCache?: unknown }).enableCompileCache) return // Node >= 22.1 keeps its own cache there

    const files = readdirSync(join(dir, 'v8'))
    expect(files).toHaveLength(1)
    const file = join(dir, 'v8', files[0]!)
    await fs.writeFile(file, Buffer.alloc(4096, 0x5a))
    const garbled = await runCli(['status', '--json'], { cwd: ws, env })
    expect(garbled.code, garbled.stderr).toBe(0)
    expect(JSON.parse(garbled.stdout)).toMatchObject({ clean: false })
    expect((await fs.readFile(file)).equals(Buffer.alloc(4096, 0x5a))).toBe(false) // rewritten

    const notADirectory = join(cache, 'a-file')
    await fs.writeFile(notADirectory, '')
    const unwritable = await runCli(['status', '--json'], { cwd: ws, env: { XDG_CACHE_HOME: notADirectory } })
    expect(unwritable.code, unwritable.stderr).toBe(0)
    expect(unwritable.stderr).toBe('')
  })
})
