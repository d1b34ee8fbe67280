import { spawn, spawnSync } from 'node:child_process'
import { existsSync, promises as fs, readFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { SandboxError, Workspace } from '../../src/index.js'
import { runSandboxed } from '../../src/sandbox/runSandboxed.js'
import { useHelloServer } from '../helpers/helloServer.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

const read = (path: string) => readFileSync(path, 'utf8')

describe('sandboxed runs', () => {
  let ws: Workspace
  beforeAll(async () => {
    ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a', 'src/main.ts': 'main' }) })
  })

  it('runs inside the branch mounted at the workspace path; returns exit code, output and changed paths', async () => {
    await using b = await ws.branch('run')
    const r = await b.run(`pwd; cat ${ws.dir}/a.txt; echo new > ${ws.dir}/hardcoded.txt; rm src/main.ts; echo oops >&2; exit 7`)
    expect(r.exitCode).toBe(7)
    expect(r.stdout).toBe(`${ws.dir}\na`)
    expect(r.stderr).toBe('oops\n')
    expect(r.timedOut).toBe(false)
    expect(r.branch).toBe('run')
    expect(r.changedPaths).toEqual(['hardcoded.txt', 'src/main.ts'])
    expect(read(join(b.path, 'hardcoded.txt'))).toBe('new\n')
    expect(existsSync(join(ws.dir, 'hardcoded.txt'))).toBe(false)
    expect(read(join(ws.dir, 'src/main.ts'))).toBe('main')
  })

  it('cannot modify the parent workspace, its store, or any path outside the branch', async () => {
    const outside = tempDir('outside')
    await fs.chmod(outside, 0o777)
    await using b = await ws.branch('jail')
    const r = await b.run([
      'sh',
      '-c',
      `touch ${outside}/escaped; touch /etc/escaped; echo x > ${join(tmpdir(), 'fp-escaped')}; ls -a ${ws.dir}; mount -o remount,rw / 2>/dev/null; touch /etc/again; echo done`,
    ])
    expect(r.stdout).not.toContain('.forkpoint')
    expect(r.stdout).toContain('done')
    expect(r.stderr).toMatch(/Read-only file system|Permission denied/)
    expect(existsSync(join(outside, 'escaped'))).toBe(false)
    expect(existsSync('/etc/escaped')).toBe(false)
    expect(existsSync('/etc/again')).toBe(false)
    expect(existsSync(join(tmpdir(), 'fp-escaped'))).toBe(false) // /tmp is a throwaway tmpfs inside
    expect(read(join(ws.dir, 'a.txt'))).toBe('a')
  })

  it('without a branch, works on the workspace itself but cannot touch its store', async () => {
    const r = await ws.run(`echo direct > direct.txt; touch .forkpoint/evil || echo refused`)
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('refused')
    expect(read(join(ws.dir, 'direct.txt'))).toBe('direct\n')
    expect(existsSync(join(ws.store.root, 'evil'))).toBe(false)
    expect(r.changedPaths).toEqual(['direct.txt'])
    await fs.rm(join(ws.dir, 'direct.txt'))
  })

  describe('network', () => {
    const port = useHelloServer()
    const probe = () => [
      process.execPath,
      '-e',
      `require('net').connect(${port()}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', (e) => { console.log(e.code); process.exit(3) })`,
    ]

    it('net "none" cannot reach even the host 127.0.0.1', async () => {
      const r = await ws.run(probe(), { net: 'none' })
      expect(r.exitCode).toBe(3)
      expect(r.stdout).toContain('ECONNREFUSED')
    })

    it('net "host" can (so the check above can fail)', async () => {
      const r = await ws.run(probe(), { net: 'host' })
      expect(r.exitCode).toBe(0)
    })
  })

  it('a timeout kills the whole process tree', async () => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1000}`
    const r = await ws.run(`sleep ${marker} & (sleep ${marker}; echo) & sleep ${marker}`, { timeout: 300 })
    expect(r.timedOut).toBe(true)
    expect(r.exitCode).toBe(137)
    await expect.poll(() => sleepers(marker), { timeout: 30_000 }).toEqual([])
  })

  it('an abort signal kills the whole process tree', async () => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1000}`
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 200)
    const r = await ws.run(`sleep ${marker} & sleep ${marker}`, { signal: controller.signal })
    expect(r.exitCode).toBe(137)
    await expect.poll(() => sleepers(marker), { timeout: 30_000 }).toEqual([])
  })

  it('processes left running when the command exits are killed with it', async () => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1000}`
    const r = await ws.run(`(sleep ${marker} &) ; echo started`)
    expect(r.stdout).toBe('started\n')
    expect(sleepers(marker)).toEqual([])
  })

  it('a killed caller takes its running sandbox along', async () => {
    const marker = `${process.pid}.${Date.now() % 100000}`
    // the module alone, not the whole library: the child's start is most of this test's time
    const script = `
      const { Workspace } = await import(${JSON.stringify(new URL('../../src/branch/Workspace.ts', import.meta.url).pathname)})
      const ws = await Workspace.open({ dir: ${JSON.stringify(ws.dir)} })
      const b = await ws.branch('orphaned-${marker.replace('.', '-')}')
      process.stdout.write('branch\\n')
      await b.run(['sleep', '${marker}'])`
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('branch') && resolve()))
    const running = () => spawnSync('pgrep', ['-f', `^sleep ${marker}$`]).status === 0
    for (let i = 0; i < 600 && !running(); i++) await new Promise((r) => setTimeout(r, 50))
    expect(running()).toBe(true)
    child.kill('SIGKILL')
    await new Promise((r) => child.once('close', r))
    for (let i = 0; i < 600 && running(); i++) await new Promise((r) => setTimeout(r, 50))
    expect(running()).toBe(false)
    await Workspace.open({ dir: ws.dir }) // cleans up the dead process's branch
  })

  it('enforces memory, pids and cpu limits', async () => {
    const mem = await ws.run('x=$(head -c 400000000 /dev/zero | tr "\\0" a) && echo allocated', { memory: '128M' })
    expect(mem.exitCode).not.toBe(0)
    expect(mem.stdout).not.toContain('allocated')
    const unlimited = await ws.run('x=$(head -c 64000000 /dev/zero | tr "\\0" a) && printf allocated')
    expect(unlimited.stdout).toBe('allocated')
    const pids = await ws.run('for i in 1 2 3 4 5 6 7 8; do sleep 2 & done; wait', { pids: 4, timeout: '10s' })
    expect(pids.stderr).toMatch(/fork|Resource temporarily unavailable/i)
    expect(pids.limits.pids).toBe(process.getuid?.() === 0 ? 'cgroup' : 'rlimit') // the kernel never applies RLIMIT_NPROC to root
    const cpu = await ws.run('while :; do :; done', { cpu: 1, timeout: '20s' })
    expect(cpu.timedOut).toBe(false)
    expect([128 + 24, 128 + 9]).toContain(cpu.exitCode) // SIGXCPU, then SIGKILL at the hard limit
  })

  it('rejects bad limits and commands with a SandboxError (exit 2)', async () => {
    await expect(ws.run('true', { memory: 'lots' })).rejects.toBeInstanceOf(SandboxError)
    await expect(ws.run('true', { timeout: '-1s' })).rejects.toMatchObject({ exitCode: 2 })
    await expect(ws.run('true', { pids: 0 })).rejects.toBeInstanceOf(SandboxError)
    await expect(ws.run([])).rejects.toBeInstanceOf(SandboxError)
    await expect(ws.run('true', { net: 'lan' as never })).rejects.toBeInstanceOf(SandboxError)
    await expect(runSandboxed({ view: '/nonexistent/view', workspace: ws.dir, cmd: 'true' })).rejects.toThrow(/could not be set up/)
    const missing = await ws.run(['/no/such/program'])
    expect(missing.exitCode).toBe(127)
  })

  it('feeds stdin and passes the environment', async () => {
    const r = await ws.run('cat; echo $GREETING', { input: 'from stdin\n', env: { PATH: process.env['PATH'], GREETING: 'hi' } })
    expect(r.stdout).toBe('from stdin\nhi\n')
  })
})

function sleepers(marker: string): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(`sleep\0${marker}`) && !readFileSync(`/proc/${p}/stat`, 'utf8').includes(') Z ')
      } catch {
        return false
      }
    })
}
