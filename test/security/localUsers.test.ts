// Adversary 3 of THREAT-MODEL.md: other local users.
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startService } from '../../src/service/httpService.js'
import { CLI, runProgram } from '../helpers/cli.js'
import { useServices } from '../helpers/serviceCleanup.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/until.js'
import { storeWorkspace } from '../helpers/workspace.js'

describe("the service's socket, port and token", () => {
  const { services, children } = useServices()

  /** Run `node -e SCRIPT` as nobody (not synchronously: a service of this process answers it); its output, trimmed. */
  async function asNobody(script: string, ...args: string[]): Promise<string> {
    const r = await runProgram(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', script, ...args], { cwd: '/' })
    return r.stdout.trim() || r.stderr.trim()
  }

  /** A workspace whose directories every user may walk through: only the modes of what the service makes keep others out. */
  async function openWorkspace(): Promise<string> {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    for (const d of [join(dir, '..'), dir, join(dir, '.forkpoint')]) chmodSync(d, 0o755)
    return dir
  }

  const CONNECT = `require('net').connect(process.argv[1]).on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })`
  const READ = `try { console.log(require('fs').readFileSync(process.argv[1], 'utf8')) } catch (e) { console.log(e.code) }`
  const STATUS = `fetch(process.argv[1] + '/v1/status', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then((r) => console.log(r.status), (e) => console.log(e.message))`

  it('another user cannot connect to the Unix socket', async () => {
    const dir = await openWorkspace()
    const service = await startService({ dir, watch: false })
    services.push(service)
    expect(await asNobody(CONNECT, service.address.slice('unix:'.length))).toBe('EACCES')
  })

  it('another user cannot read the token file of a TCP service, nor call the service without it', async () => {
    const dir = await openWorkspace()
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    const tokenFile = join(dir, '.forkpoint', 'service-token')
    expect(readFileSync(tokenFile, 'utf8').trim()).not.toBe('')
    expect(await asNobody(READ, tokenFile)).toBe('EACCES')
    expect(await asNobody(STATUS, service.address)).toBe('401')
  })

  it('another user cannot see the token in /proc/PID/cmdline: serve takes it from a file or the environment, and refuses --token', async () => {
    const dir = await openWorkspace()
    const token = randomBytes(16).toString('hex')
    const refused = spawnSync(CLI, ['serve', '--listen', '127.0.0.1:0', '--token', token], { cwd: dir, encoding: 'utf8' })
    expect([refused.status, refused.stderr]).toEqual([2, expect.stringMatching(/--token-file FILE or FORKPOINT_TOKEN/)])
    const file = join(tempDir('local-users-token'), 'token')
    writeFileSync(file, `${token}\n`, { mode: 0o600 })
    const child = spawn(CLI, ['serve', '--listen', '127.0.0.1:0', '--token-file', file, '--no-watch', '--json'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] })
    children.push(child)
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    await until(() => out.includes('\n') || child.exitCode !== null, 'the service to start')
    const { address } = JSON.parse(out) as { address: string }
    const pids = spawnSync('pgrep', ['-f', `${dir}|--token-file`], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean)
    expect(pids.length).toBeGreaterThan(0)
    for (const pid of pids) expect(await asNobody(READ, `/proc/${pid}/cmdline`)).not.toContain(token)
    const ok = await fetch(`${address}/v1/status`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } })
    expect(ok.status).toBe(200)
    expect(existsSync(join(dir, '.forkpoint', 'service-token'))).toBe(true)
  })
})
