// Adversary 3 of THREAT-MODEL.md: other local users.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { promises as fs, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, chmodSync, symlinkSync } from 'node:fs'
import { type AddressInfo, type Server as NetServer, type Socket, createServer as createNetServer } from 'node:net'
import { dirname, join } from 'node:path'
import { type Server as TlsServer, createServer as createTlsServer } from 'node:tls'
import { describe, expect, it, afterAll } from 'vitest'
import { Workspace } from '../../src/index.js'
import { makeSocketDir } from '../../src/machine/machineRecords.js'
import { startService } from '../../src/service/httpService.js'
import { type Runner, runAs, toolWorkspace } from '../branch/toolsInBranch.js'
import { fp, fpInProcess, fpJsonInProcess, CLI, ROOT, runCliInProcess, runProgram } from '../helpers/cli.js'
import { PLANT, euidAsNobody, fpAs, giveToNobody, openToOthers } from '../helpers/privilegedModes.js'
import { type User, hookAs, listenAs, runAsUser } from '../helpers/claudeHookAs.js'
import { answerClaudeHook } from '../../src/adapters/claudeCode/answerHook.js'
import { readRef } from '../../src/store/refs.js'
import { useServices } from '../helpers/serviceCleanup.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { makeTestCa } from '../helpers/tlsRegistry.js'
import { until } from '../helpers/until.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** Root's sandboxed work hands `nobody` nothing that runs as root: the case needs a root caller, so it runs as root only. */
describe.runIf(process.getuid?.() === 0)("a root caller's sandboxed work is no other user's root", () => {
  /** A workspace with its store that nobody may reach into. */
  const workspace = async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    openToOthers(dir)
    expect((await fpInProcess(dir, 'init')).code).toBe(0)
    return dir
  }

  it('a setuid copy of id made by forkpoint run gives nobody no euid 0', async () => {
    const dir = await workspace()
    expect((await fp(dir, 'run', '--', 'sh', '-c', PLANT)).code).toBe(0)
    expect([euidAsNobody(join(dir, 's')), euidAsNobody(join(dir, 'g'))]).toEqual(['65534', '65534'])
  })

  it("a branch's host mount is nosuid: even a setuid root file put there from the host gives nobody no euid 0; nor does its commit", async () => {
    const dir = await workspace()
    const branch = await fpJsonInProcess<{ path: string; view: string }>(dir, 'branch', 'attempt')
    expect(branch.json.view).toBe('host')
    openToOthers(join(branch.json.path, '..'))
    expect((await fp(dir, 'run', '--branch', 'attempt', '--', 'sh', '-c', PLANT)).code).toBe(0)
    await fs.copyFile('/usr/bin/id', join(branch.json.path, 'host-made'))
    await fs.chmod(join(branch.json.path, 'host-made'), 0o4755)
    expect(['s', 'host-made'].map((f) => euidAsNobody(join(branch.json.path, f)))).toEqual(['65534', '65534'])
    expect((await fpInProcess(dir, 'commit', 'attempt')).code).toBe(0)
    expect(['s', 'g', 'host-made'].map((f) => euidAsNobody(join(dir, f)))).toEqual(['65534', '65534', '65534'])
  })

  it('a branch run through the library leaves nothing setuid in its view either', async () => {
    await using ws = await Workspace.open({ dir: await workspace() })
    const branch = await ws.branch('attempt')
    expect((await branch.run(PLANT)).exitCode).toBe(0)
    await branch.commit()
    expect(euidAsNobody(join(ws.dir, 's'))).toBe('65534')
  })
})

describe('store state and ownership: a planted store mounts, removes and kills nothing', () => {
  const ROOT: Runner = { user: 'root' }
  const NOBODY: Runner = { user: 'nobody' }
  const PLANTED_ID = 'mplanted0-00112233aa'
  const BASE_TREE = `sha256:${'ab'.repeat(32)}`
  const victims: ChildProcess[] = []
  afterAll(() => victims.forEach((v) => v.kill('SIGKILL')))

  /** A process's start time (field 22 of its stat), or null when it is gone: forkpoint's own way to tell one process from the next. */
  const startOf = (pid: number): string | null => {
    if (!existsSync(`/proc/${pid}/stat`)) return null
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  }
  const mountPoints = (): string[] =>
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4] ?? '')
  const mountedUnder = (dir: string): string[] => mountPoints().filter((p) => p === dir || p.startsWith(`${dir}/`))

  /** A directory outside the workspace with one file in it, owned by the runner: what an attacker would mount over. */
  function target(runner: Runner, label: string): string {
    const dir = tempDir(label)
    writeFileSync(join(dir, 'keep'), 'the owner’s file\n')
    if (runner.user === 'nobody') for (const p of [dir, join(dir, 'keep')]) chownSync(p, 65534, 65534)
    return dir
  }

  /** A branch state written by someone else into the workspace's store (a cloned repository, a sandboxed command). */
  function plant(runner: Runner, workspace: string, fields: Record<string, unknown>): void {
    const dir = join(workspace, '.forkpoint', 'branches', 'live', PLANTED_ID)
    for (const sub of ['', 'upper', 'work', 'mnt']) mkdirSync(join(dir, sub), { recursive: true })
    mkdirSync(join(workspace, '.forkpoint', 'branches', 'bases', BASE_TREE.slice('sha256:'.length)), { recursive: true })
    const state = {
      kind: 'branch-state',
      schemaVersion: 1,
      id: PLANTED_ID,
      name: 'planted',
      parent: null,
      backend: 'overlay',
      baseTree: BASE_TREE,
      parentGeneration: 0,
      owner: null,
      holder: null,
      createdAt: new Date().toISOString(),
      ...fields,
    }
    writeFileSync(join(dir, 'state.json'), JSON.stringify(state))
    if (runner.user === 'nobody') runAs(ROOT, workspace, ['chown', '-R', 'nobody:nogroup', join(workspace, '.forkpoint')])
  }

  for (const runner of [ROOT, NOBODY]) {
    it(`as ${runner.user}: branch --list, abort and commit refuse a state naming layers and a host path (exit 5), and nothing is mounted on or removed from the path`, async () => {
      const workspace = await toolWorkspace(runner)
      const evil = target(runner, 'attacker-layer')
      writeFileSync(join(evil, 'payload'), '* * * * * root id > /tmp/pwned\n')
      const victim = target(runner, 'victim-dir')
      plant(runner, workspace, { layers: [evil], hostView: { via: runner.user === 'root' ? 'kernel' : 'fuse', path: victim } })
      for (const args of [
        ['branch', '--list'],
        ['abort', 'planted'],
        ['commit', 'planted'],
      ]) {
        const ran = await fpAs(runner.user, workspace, ...args)
        expect([args, ran.code, ran.stderr]).toEqual([args, 5, expect.stringMatching(/refusing the state of branch .*names the path/)])
        expect(mountedUnder(victim)).toEqual([])
        expect(readdirSync(victim)).toEqual(['keep'])
        expect(readdirSync(evil).sort()).toEqual(['keep', 'payload'])
      }
    })
  }

  it('as root: a state whose layers are not the branch’s own is refused (exit 5), even without a host path', async () => {
    const workspace = await toolWorkspace(ROOT)
    const evil = target(ROOT, 'attacker-layer')
    plant(ROOT, workspace, { layers: [evil] })
    const ran = await fpInProcess(workspace, 'branch', '--list')
    expect([ran.code, ran.stderr]).toEqual([5, expect.stringMatching(/layers .* are not the branch’s own|layers .* are not the branch's own/)])
    expect(mountedUnder(evil)).toEqual([])
  })

  it('as root: abort of a state naming another process as its holder does not kill that process', async () => {
    const workspace = await toolWorkspace(ROOT)
    const victim = spawn('sleep', ['1000'], { stdio: 'ignore' })
    victims.push(victim)
    const start = startOf(victim.pid!)
    plant(ROOT, workspace, { holder: { pid: victim.pid, start } })
    const ran = await fpInProcess(workspace, 'abort', 'planted')
    expect([ran.code, ran.stderr]).toEqual([0, ''])
    expect(startOf(victim.pid!)).toBe(start)
    expect(existsSync(join(workspace, '.forkpoint', 'branches', 'live', PLANTED_ID))).toBe(false)
  })

  it.runIf(process.getuid?.() === 0)(
    'as root: a store another user owns is refused (exit 2, with the way to allow it); allowed by FORKPOINT_SAFE_DIRECTORY, it works',
    async () => {
      const workspace = await toolWorkspace(NOBODY)
      const store = join(workspace, '.forkpoint')
      for (const args of [['status'], ['branch', '--list'], ['log']]) {
        const refused = await fpInProcess(workspace, ...args)
        expect([args, refused.code, refused.stderr]).toEqual([args, 2, expect.stringContaining(`refusing the store ${store}: it belongs to uid 65534`)])
        expect(refused.stderr).toContain(`FORKPOINT_SAFE_DIRECTORY=${store}`)
      }
      expect((await runCliInProcess(['status'], { cwd: workspace, env: { FORKPOINT_SAFE_DIRECTORY: `/elsewhere:${store}` } })).code).toBe(0)
      expect((await runCliInProcess(['branch', '--list'], { cwd: workspace, env: { FORKPOINT_SAFE_DIRECTORY: '*' } })).code).toBe(0)
      expect(runAs(NOBODY, workspace, [CLI, 'status']).status).toBe(0) // its owner uses it as ever
    },
  )
})

describe.runIf(process.getuid?.() === 0)('a store the caller may not reach', () => {
  it('is a usage error naming it (exit 2), where it was an internal error', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    expect((await fpInProcess(dir, 'init')).code).toBe(0)
    chmodSync(dir, 0o755)
    chmodSync(join(dir, '.forkpoint'), 0o700)
    const run = await fpAs('nobody', dir, 'status')
    expect([run.code, run.stderr]).toEqual([2, expect.stringContaining(`cannot read ${join(dir, '.forkpoint', 'HEAD')}: permission denied`)])
  })
})

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
    for (const d of [dir, join(dir, '.forkpoint')]) chmodSync(d, 0o755) // its parent is the system's temporary directory, open to all
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

  it("another user cannot read the store through forkpoint ui's read-only web view: its views need the token in the URL it printed", async () => {
    const dir = await openWorkspace()
    const service = await startService({ dir, listen: '127.0.0.1:0', readOnly: true, watch: false })
    services.push(service)
    const VIEW = `fetch(process.argv[1] + '/v1/view/' + process.argv[2]).then((r) => console.log(r.status), (e) => console.log(e.message))`
    for (const view of ['graph', 'runs', 'branches']) expect(await asNobody(VIEW, service.address, view)).toBe('401')
    expect(await asNobody(`fetch(process.argv[1] + '/ui/').then((r) => console.log(r.status))`, service.address)).toBe('200') // the page itself: the same in every install
    expect(existsSync(join(dir, '.forkpoint', 'service-token'))).toBe(false) // a serve of the same store keeps its own there
    const own = await fetch(`${service.address}/v1/view/graph`, { headers: { authorization: `Bearer ${service.token}` } })
    expect(own.status).toBe(200)
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

describe.runIf(process.getuid?.() === 0)("root's machine sockets", () => {
  it('a socket directory another user made first is refused (exit 2), nothing made in it', () => {
    const tmp = tempDir('machine-squat')
    chmodSync(tmp, 0o1777)
    const squatted = join(tmp, 'fp-machines-0')
    mkdirSync(squatted, { mode: 0o777 })
    chownSync(squatted, 65534, 65534)
    const saved = process.env['TMPDIR']
    process.env['TMPDIR'] = tmp // makeSocketDir is synchronous: nothing else runs while it is set
    try {
      expect(() => makeSocketDir('m00000000')).toThrow(expect.objectContaining({ exitCode: 2, message: expect.stringMatching(/not this user's own directory/) }))
    } finally {
      if (saved === undefined) delete process.env['TMPDIR']
      else process.env['TMPDIR'] = saved
    }
    expect(readdirSync(squatted)).toEqual([])
  })
})

describe('the Python client against a port another user took', () => {
  // Any local user may listen on a port the service left (or never had): an https:// URL
  // must then hand that listener a TLS handshake it cannot finish, never the bearer token.
  const listeners: Array<NetServer | TlsServer> = []
  afterAll(() => listeners.forEach((l) => l.close()))

  /** Listen on a free loopback port, keeping what a client sends (after TLS, for a TLS listener); a plain listener hangs up after the first bytes. */
  async function listen(server: NetServer | TlsServer, connection: 'connection' | 'secureConnection'): Promise<{ url: string; received: () => string }> {
    const chunks: Buffer[] = []
    server.on(connection, (socket: Socket) =>
      socket
        .on('data', (d: Buffer) => {
          chunks.push(d)
          if (connection === 'connection') socket.end()
        })
        .on('error', () => {}),
    )
    server.on('tlsClientError', () => {})
    listeners.push(server)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    return { url: `https://127.0.0.1:${port}`, received: () => Buffer.concat(chunks).toString('latin1') }
  }

  /** Call status with a token on `url` from Python: the name of the error it raised. */
  async function pythonStatus(url: string): Promise<string> {
    const script = `
from forkpoint_client import Client
try:
    Client(url="${url}", token="s3cret-token", timeout=30).status()
    print("answered")
except Exception as err:
    print(type(err).__name__)
`
    const r = await runProgram(['python3', '-c', script], { cwd: '/', env: { PYTHONPATH: join(import.meta.dirname, '..', '..', 'clients', 'python') } })
    return r.stdout.trim()
  }

  it('a plain TCP listener on the port of an https:// URL gets a TLS hello, not the token', async () => {
    const listener = await listen(createNetServer(), 'connection')
    expect(await pythonStatus(listener.url)).not.toBe('answered')
    expect(listener.received().startsWith('\x16\x03')).toBe(true) // a TLS handshake record
    expect(listener.received()).not.toContain('s3cret-token')
  })

  it('a TLS listener with a certificate the client does not trust gets no request', async () => {
    const ca = makeTestCa(tempDir('their-ca'), '127.0.0.1')
    const listener = await listen(createTlsServer({ cert: readFileSync(ca.certFile), key: readFileSync(ca.keyFile) }), 'secureConnection')
    expect(await pythonStatus(listener.url)).toBe('SSLCertVerificationError')
    expect(listener.received()).toBe('')
  })
})

describe.runIf(process.getuid?.() === 0)('the sandbox runtime root runs is the package’s own', () => {
  it('a forkpoint-sandbox planted above a package that has none (no prebuilt fits, nothing built) is not run', async () => {
    // the package as an install where no prebuilt fits and no compiler built one: its dist/, bin/ and package.json, under a directory others write to
    const shared = tempDir('shared-parent')
    chmodSync(shared, 0o1777)
    const pkg = join(shared, 'project', 'node_modules', 'forkpoint')
    mkdirSync(pkg, { recursive: true })
    for (const part of ['dist', 'bin', 'package.json']) await fs.cp(join(ROOT, part), join(pkg, part), { recursive: true })
    await fs.symlink(join(ROOT, 'node_modules'), join(pkg, 'node_modules'))
    // another user's "runtime", in every directory above the package
    const marker = join(shared, 'planted-ran')
    for (const dir of [shared, join(shared, 'project'), join(shared, 'project', 'node_modules')]) {
      mkdirSync(join(dir, 'build'))
      writeFileSync(join(dir, 'build', 'forkpoint-sandbox'), `#!/bin/sh\nid -u > ${marker}\n`, { mode: 0o755 })
      chownSync(join(dir, 'build'), 65534, 65534)
      chownSync(join(dir, 'build', 'forkpoint-sandbox'), 65534, 65534)
    }
    const ws = await makeWorkspace({ 'a.txt': 'a\n' })
    expect((await runProgram([join(pkg, 'bin', 'forkpoint'), 'init'], { cwd: ws })).code).toBe(0)
    const r = await runProgram([join(pkg, 'bin', 'forkpoint'), 'run', '--', 'true'], { cwd: ws })
    expect(existsSync(marker)).toBe(false)
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/sandbox runtime is not built and none is prebuilt/)
  })
})

describe.runIf(process.getuid?.() === 0)("a plain snapshot's client and the service it sends to", () => {
  const { children } = useServices()

  for (const [victim, other] of [
    ['root', 'nobody'],
    ['nobody', 'root'],
  ] as const) {
    it(`as ${victim}: a service.sock that a hostile workspace links to another user's socket is never sent the snapshot; it is made here`, async () => {
      const open = tempDir('snapshot-other')
      chmodSync(open, 0o1777)
      const [socket, log] = [join(open, 'evil.sock'), join(open, 'got')]
      await listenAs(other, socket, log, children)
      const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
      if (victim === 'nobody') giveToNobody(dir)
      symlinkSync(socket, join(dir, '.forkpoint', 'service.sock'))
      const made = await runAsUser(victim, [CLI, 'snapshot', '-m', 'the victims message'], { cwd: dir })
      expect(made.code, made.stderr).toBe(0)
      expect(existsSync(log)).toBe(false)
      const logged = await runAsUser(victim, [CLI, 'log', '--json'], { cwd: dir })
      expect(JSON.parse(logged.stdout)).toMatchObject({ entries: [{ message: 'the victims message' }] })
    })
  }
})

describe.runIf(process.getuid?.() === 0)("the Claude Code hook's client and the service it sends to", () => {
  const { services, children } = useServices()
  const hookEvent = (dir: string) => JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 'victim', cwd: dir, tool_name: 'Write', tool_input: {}, tool_use_id: 't1' })
  const SECRET_ENV = { CLAUDE_API_KEY: 'the-victims-secret-value' }

  /** The victim's images of its session, as the victim reads them. */
  async function victimImages(user: User, dir: string): Promise<number> {
    const r = await runAsUser(user, [CLI, 'log', '--json', 'refs/claude/victim'], { cwd: dir })
    return r.code === 0 ? (JSON.parse(r.stdout) as { entries: unknown[] }).entries.length : -1
  }

  /** Where another user listens, in a directory open to all: its socket and the log of what it was sent. */
  async function otherUsersListener(other: User): Promise<{ socket: string; log: string }> {
    const open = tempDir('hook-other')
    chmodSync(open, 0o1777)
    const [socket, log] = [join(open, 'evil.sock'), join(open, 'got')]
    await listenAs(other, socket, log, children)
    return { socket, log }
  }

  for (const [victim, other] of [
    ['root', 'nobody'],
    ['nobody', 'root'],
  ] as const) {
    it(`as ${victim}: a service.sock that a hostile workspace links to another user's socket is never sent the hook (its input, the environment's secrets)`, async () => {
      const { socket, log } = await otherUsersListener(other)
      const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
      if (victim === 'nobody') giveToNobody(dir)
      symlinkSync(socket, join(dir, '.forkpoint', 'service.sock'))
      const r = await hookAs(victim, dir, hookEvent(dir), SECRET_ENV)
      expect([r.code, r.stderr]).toEqual([0, '']) // the hook ran in its own process
      expect(existsSync(log)).toBe(false)
      expect(await victimImages(victim, dir)).toBe(1)
    })
  }

  it("as root: a socket another user bound in a store root was allowed to use (FORKPOINT_SAFE_DIRECTORY) is not root's service: never sent the hook", async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    giveToNobody(dir)
    const log = join(tempDir('hook-other-log'), 'got')
    chmodSync(dirname(log), 0o1777)
    await listenAs('nobody', join(dir, '.forkpoint', 'service.sock'), log, children)
    const r = await hookAs('root', dir, hookEvent(dir), { ...SECRET_ENV, FORKPOINT_SAFE_DIRECTORY: join(dir, '.forkpoint') })
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(existsSync(log)).toBe(false)
  })

  it('another user cannot have a TCP service do a hook without its token', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    for (const d of [dir, join(dir, '.forkpoint')]) chmodSync(d, 0o755)
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false, claudeHook: answerClaudeHook })
    services.push(service)
    const body = JSON.stringify({ env: {}, event: JSON.parse(hookEvent(dir)) as object })
    const POST = `fetch(process.argv[1] + '/v1/claude/hook', { method: 'POST', body: process.argv[2], headers: { 'content-type': 'application/json' } }).then((r) => console.log(r.status), (e) => console.log(e.message))`
    const asNobody = await runAsUser('nobody', [process.execPath, '-e', POST, service.address, body], { cwd: '/' })
    expect(asNobody.stdout.trim()).toBe('401')
    expect(await readRef(store, 'refs/claude/victim')).toBeNull()
    const own = await fetch(`${service.address}/v1/claude/hook`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${service.token}` },
    })
    expect(own.status).toBe(200)
    expect(await readRef(store, 'refs/claude/victim')).not.toBeNull()
  })
})
