import { spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, promises as fs, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import Module from 'node:module'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BUNDLE_DIR, CLI, ROOT, runCli } from '../helpers/cli.js'
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
    // a sandbox's environment is the allowlist (issue 19): the variable is asked for by name
    const child = await runCli(['run', '--env', 'NODE_EXTRA_CA_CERTS', '--env', 'FORKPOINT_DEFERRED_CA_CERTS', '--', 'sh', '-c', 'printf "%s|%s" "$NODE_EXTRA_CA_CERTS" "${FORKPOINT_DEFERRED_CA_CERTS-unset}"'], { cwd: ws, env: withCerts })
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

    for (const args of [['pull', `file://${layout}:v1`], ['clone', `file://${layout}:v1`, '--into', join(parent, 'cloned')]]) {
      const r = await runCli(['-C', 'ws', ...args], { cwd: parent, env: withCerts })
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr.split(LOADED)).toHaveLength(2)
    }
    expect(existsSync(join(parent, 'cloned', 'a.txt'))).toBe(true)

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
    const forked = await runCli(['replay', '--live-from', '0', 'latest', '--', 'sh', '-c', 'true'], { cwd: ws, env: withCerts })
    expect(forked.code, forked.stderr).toBe(0)
    expect(forked.stderr.split(LOADED)).toHaveLength(2)
  })

  it('reruns ci record --proxy and ci check --live with them, and not the offline forms', async () => {
    const ws = await makeWorkspace({ 'agent.mjs': "console.log('done')\n" })
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    const loads = (r: { stderr: string }) => r.stderr.split(LOADED).length - 1 // the agent, a Node process too, may load them as well
    const ci = async (...args: string[]) => {
      const r = await runCli(['ci', ...args], { cwd: ws, env: withCerts })
      expect(r.code, r.stderr).toBe(0)
      return r
    }
    const recorded = await ci('record', '--entrypoint', 'agent.mjs', '--out', 'golden.run.json')
    const proxied = await ci('record', '--entrypoint', 'agent.mjs', '--out', 'proxied.run.json', '--proxy')
    expect(loads(proxied)).toBe(loads(recorded) + 1)
    const offline = await ci('check', '--entrypoint', 'agent.mjs', '--expected', 'golden.run.json')
    const live = await ci('check', '--entrypoint', 'agent.mjs', '--expected', 'golden.run.json', '--live')
    expect(loads(live)).toBe(loads(offline) + 1)
  })

  it('passes SIGTERM on to the rerun command, so nothing is left running', async () => {
    const ws = await makeWorkspace({ 'a.txt': 'a' })
    expect((await runCli(['init'], { cwd: ws })).code).toBe(0)
    const marker = `sleep 31.${process.pid}`
    const child = spawn(CLI, ['run', '--record', '--proxy', '--', 'sh', '-c', `exec ${marker}`], { cwd: ws, env: { PATH: process.env['PATH'], HOME: ws, ...withCerts }, stdio: 'ignore' })
    const running = () => spawnSync('pgrep', ['-f', `^${marker}`]).status === 0 // the agent itself, not the command lines naming it
    for (let i = 0; i < 100 && !running(); i++) await new Promise((r) => setTimeout(r, 50))
    expect(running()).toBe(true)
    const closed = new Promise((r) => child.once('close', r))
    child.kill('SIGTERM')
    await closed
    for (let i = 0; i < 40 && running(); i++) await new Promise((r) => setTimeout(r, 50))
    expect(running()).toBe(false)
  })

  it('works through chains of relative and absolute symlinks, as npm installs it, where readlink has no -f', async () => {
    const dir = tempDir('bin')
    symlinkSync(CLI, join(dir, 'absolute'))
    mkdirSync(join(dir, '.bin'))
    symlinkSync('../absolute', join(dir, '.bin', 'forkpoint'))
    // a readlink without -f (older macOS and BSDs)
    writeFileSync(join(dir, 'readlink'), '#!/bin/sh\ncase "$1" in -f) exit 1;; esac\nexec /usr/bin/readlink "$@"\n', { mode: 0o755 })
    const env = { PATH: `${dir}:${process.env['PATH']}` }
    for (const bin of [join(dir, '.bin', 'forkpoint'), 'forkpoint']) {
      const r = spawnSync(bin, ['--version'], { encoding: 'utf8', cwd: dir, env: { ...env, PATH: `${dir}/.bin:${env.PATH}` } })
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
    }
  })

  it('does not run a cache made from another build of the bundle, even one of the same length', () => {
    const pkg = tempDir('pkg')
    cpSync(join(CLI, '..'), join(pkg, 'bin'), { recursive: true })
    cpSync(join(BUNDLE_DIR, 'start.cjs'), join(pkg, 'dist', 'cli', 'start.cjs'))
    cpSync(join(BUNDLE_DIR, 'main.cjs'), join(pkg, 'dist', 'cli', 'main.cjs'))
    symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'))
    const env = { PATH: process.env['PATH'], XDG_CACHE_HOME: tempDir('cache') } // no npm_package_version: the bundle's own
    const version = () => spawnSync(join(pkg, 'bin', 'forkpoint'), ['--version'], { encoding: 'utf8', env }).stdout.trim()
    expect(version()).toBe('0.1.0')
    expect(version()).toBe('0.1.0') // from the cache
    const main = join(pkg, 'dist', 'cli', 'main.cjs')
    const source = readFileSync(main, 'utf8')
    expect(source).toContain('"0.1.0"')
    writeFileSync(main, source.replace('"0.1.0"', '"0.9.0"'))
    expect(version()).toBe('0.9.0')
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
