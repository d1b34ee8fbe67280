import { spawnSync } from 'node:child_process'
import { existsSync, promises as fs, readFileSync, readdirSync } from 'node:fs'
import { type Server, createServer } from 'node:net'
import { homedir, hostname, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Branch, Workspace } from '../../src/index.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

/**
 * Issue 19: a sandbox never holds privilege over the host, sees no host socket, secret or
 * sibling branch it was not given. Runs as root here and as `nobody` through
 * test/branch/conformance.unprivileged.test.ts.
 */
const root = process.getuid?.() === 0
let ws: Workspace
let branch: Branch
beforeAll(async () => {
  ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
  branch = await ws.branch('attempts')
})
afterAll(() => branch.abort())

/**
 * Runs `script` in the workspace itself and in an overlay branch (for root, a view that
 * cannot be idmapped: see docs/sandbox.md); WROTE in the output means a write went through.
 */
const attempt = async (script: string) => {
  const line = `${script} 2>/dev/null && echo WROTE; true`
  return (await ws.run(line)).stdout + (await branch.run(line)).stdout
}

describe('no privilege over the host', () => {
  it.each([
    ['/proc/sys/kernel/core_pattern', '|/bin/sh -c evil'],
    ['/proc/sys/vm/drop_caches', '1'],
    ['/proc/sys/vm/overcommit_memory', '1'],
    ['/proc/sys/kernel/hostname', 'evil'],
    ['/proc/sysrq-trigger', 'h'],
  ])('cannot write %s', async (file, value) => {
    const before = readable(file)
    expect(await attempt(`echo '${value}' > ${file}`)).not.toContain('WROTE')
    expect(readable(file)).toBe(before)
  })

  it.each(['/dev/loop0', '/dev/kmsg', '/dev/tty1', '/dev/mem', '/dev/vda', '/dev/sda'])('cannot write the host device %s (a minimal /dev)', async (dev) => {
    expect(await attempt(`echo x > ${dev}`)).not.toContain('WROTE')
  })

  it('has a minimal /dev', async () => {
    const r = await ws.run('ls /dev')
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(['fd', 'full', 'null', 'ptmx', 'pts', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'tty', 'urandom', 'zero'])
    expect((await ws.run('echo ok > /dev/null && head -c 4 /dev/zero | wc -c && echo x > /dev/shm/x && cat /dev/shm/x')).stdout).toBe('4\nx\n')
  })

  it('cannot change the host name (its own UTS namespace)', async () => {
    const host = hostname()
    await ws.run('hostname evil-host 2>/dev/null; echo evil-host > /proc/sys/kernel/hostname 2>/dev/null; true')
    expect(hostname()).toBe(host)
  })

  it('runs as an unprivileged user of the host: never uid 0 outside', async () => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1000}`
    const running = ws.run(['sleep', marker])
    let uid: number | null = null
    for (let i = 0; i < 600 && uid === null; i++) {
      uid = hostUidOf(`sleep\0${marker}`)
      if (uid === null) await new Promise((r) => setTimeout(r, 50))
    }
    expect(uid).not.toBeNull()
    expect(uid).not.toBe(0)
    if (!root) expect(uid).toBe(process.getuid?.())
    spawnSync('pkill', ['-f', `^sleep ${marker}$`])
    await running
  })

  it("keeps the workspace files' owners inside and on disk (root's view is an idmapped mount)", async () => {
    const r = await ws.run('stat -c %u a.txt; echo new > owned.txt; stat -c %u owned.txt')
    const me = String(process.getuid?.())
    expect(r.stdout).toBe(`${me}\n${me}\n`)
    expect((await fs.stat(join(ws.dir, 'owned.txt'))).uid).toBe(process.getuid?.())
    await fs.rm(join(ws.dir, 'owned.txt'))
  })

  it('has its own SysV IPC namespace', async () => {
    const made = spawnSync('ipcmk', ['-Q'], { encoding: 'utf8' }).stdout.match(/(\d+)/)?.[1]
    expect(made).toBeDefined()
    try {
      const inside = await ws.run('ipcs -q')
      expect(inside.stdout.split('\n').some((l) => l.split(/\s+/)[1] === made)).toBe(false)
      expect(
        spawnSync('ipcs', ['-q'], { encoding: 'utf8' })
          .stdout.split('\n')
          .some((l) => l.split(/\s+/)[1] === made),
      ).toBe(true)
    } finally {
      spawnSync('ipcrm', ['-q', made!])
    }
  })
})

describe('no host socket unless exposed', () => {
  const servers: Server[] = []
  const listen = async (path: string) => {
    const server = createServer((s) => s.on('error', () => undefined).end('hello'))
    await new Promise<void>((r) => server.listen(path, r))
    servers.push(server)
  }
  afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))))
  const connect = (path: string) => [
    process.execPath,
    '-e',
    `require('net').connect(${JSON.stringify(path)}).on('data', (d) => { console.log(String(d)); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(3) })`,
  ]

  it.each(root ? ['/run', '/var/lib', tmpdir()] : [tmpdir()])('a unix socket under %s answers only when exposed', async (dir) => {
    const path = join(root && dir !== tmpdir() ? dir : tempDir('sock'), `fp-${process.pid}-${Math.floor(Math.random() * 1e6)}.sock`)
    await listen(path)
    // the sandbox runs as an unprivileged user of the host (root's too): the socket must let it in
    await fs.chmod(path, 0o777)
    if (!root || dir === tmpdir()) await fs.chmod(join(path, '..'), 0o755)
    try {
      for (const net of ['none', 'host'] as const) {
        const hidden = await ws.run(connect(path), { net, env: { PATH: process.env['PATH'] } })
        expect(hidden.stdout).toContain('ENOENT')
      }
      const exposed = await ws.run(connect(path), { expose: [path], env: { PATH: process.env['PATH'] } })
      expect(exposed.stdout).toBe('hello\n')
    } finally {
      await fs.rm(path, { force: true })
    }
  })
})

describe('secrets stay out', () => {
  it('gets a clean environment: the allowlist, HOME its own', async () => {
    process.env['FP_TEST_API_KEY'] = 'canary-secret-19'
    try {
      const r = await ws.run('env')
      expect(r.stdout).not.toContain('canary-secret-19')
      expect(r.stdout).toContain(`PATH=${process.env['PATH']}`)
      expect(r.stdout).toMatch(/^HOME=\/home\/sandbox$/m)
    } finally {
      delete process.env['FP_TEST_API_KEY']
    }
  })

  it('has a private writable HOME and /tmp, and none of the caller home or the host secret files', async () => {
    const canary = join(homedir(), `fp-home-canary-${process.pid}`)
    await fs.writeFile(canary, 'caller')
    try {
      const r = await ws.run(
        `echo mine > $HOME/f && cat $HOME/f; echo t > /tmp/t && cat /tmp/t; cat ${canary} /etc/shadow /root/.ssh/id_rsa /etc/ssh/ssh_host_ed25519_key 2>/dev/null | wc -c`,
      )
      expect(r.stdout).toBe('mine\nt\n0\n')
      expect(existsSync(join(homedir(), 'f'))).toBe(false)
    } finally {
      await fs.rm(canary)
    }
  })

  it('never sees the store, nor a sibling branch in progress, with the store outside the workspace', async () => {
    const store = join(tempDir('outside-store'), 'store')
    const other = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }), store })
    await using writer = await other.branch('writer')
    await writer.run('echo in-progress-secret > wip.txt')
    await using reader = await other.branch('reader')
    // where a leak would show: the store's own directory, the private mounts, the workspace (not all of /var: its apt cache is gigabytes, and grepping it outran the test's minute on a busy machine)
    const r = await reader.run(`ls ${store} 2>&1; grep -rs in-progress-secret /tmp /run /home /var/tmp ${dirname(store)} ${other.dir} | head -3; cat wip.txt 2>&1`)
    expect(r.stdout).toContain('No such file or directory')
    expect(r.stdout).not.toContain('in-progress-secret')
  })
})

describe('limits', () => {
  it('caps the private tmpfs mounts at the memory limit, and says so when the memory limit is weaker than asked', async () => {
    const r = await ws.run('head -c 300000000 /dev/zero > /dev/shm/big; ls -l /dev/shm/big | cut -d" " -f5', { memory: '100M' })
    expect(Number(r.stdout.trim())).toBeLessThanOrEqual(100 * 1024 * 1024)
    if (r.limits.memory === 'rlimit') expect(r.warnings.join('\n')).toMatch(/memory 100M is only a per-process address-space limit/)
    else expect(r.warnings).toEqual([])
  })

  it('holds a memory cgroup across processes where one is ours', async () => {
    const r = await ws.run('for i in 1 2 3 4 5; do (x=$(head -c 80000000 /dev/zero | tr "\\\\0" a) && sleep 2 && echo held) & done; wait', { memory: '100M' })
    if (r.limits.memory !== 'cgroup') return expect(r.warnings).not.toEqual([])
    expect(r.stdout.split('\n').filter((l) => l === 'held').length).toBeLessThan(5)
  })

  it('has no timeout with timeout 0', async () => {
    const r = await ws.run('echo ok', { timeout: 0 })
    expect(r.stdout).toBe('ok\n')
  })
})

describe('the process tree and output', () => {
  it('is gone when an aborted run settles', async () => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1000}`
    const controller = new AbortController()
    const r = ws.run(`sleep ${marker} & (sleep ${marker}; echo) & echo started; wait`, { signal: controller.signal, onOutput: () => controller.abort() })
    expect((await r).exitCode).toBe(137)
    expect(hostUidOf(`sleep\0${marker}`)).toBeNull()
  })

  it('is gone when a timed-out run settles', async () => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1000}`
    const r = await ws.run(`sleep ${marker} & sleep ${marker}`, { timeout: '1s' })
    expect(r.timedOut).toBe(true)
    expect(hostUidOf(`sleep\0${marker}`)).toBeNull()
  })

  it('streams output as it is written', async () => {
    const go = join(ws.dir, 'go')
    const chunks: string[] = []
    const r = await ws.run('echo first; while [ ! -e go ]; do sleep 0.05; done; rm go; echo second', {
      timeout: '60s',
      onOutput: (stream, chunk) => {
        chunks.push(`${stream}:${chunk.toString()}`)
        if (String(chunk).includes('first')) void fs.writeFile(go, '')
      },
    })
    expect(r.timedOut).toBe(false)
    expect(r.stdout).toBe('first\nsecond\n')
    expect(chunks.join('')).toContain('stdout:first\n')
  })

  it('keeps at most OUTPUT_CAP bytes of a stream in memory, and says it cut', async () => {
    let streamed = 0
    const r = await ws.run('head -c 20000000 /dev/zero | tr "\\\\0" a', { onOutput: (_s, c) => (streamed += c.length) })
    expect(streamed).toBe(20_000_000)
    expect(r.stdout.length).toBe(16 * 1024 * 1024)
    expect(r.truncated).toBe(true)
  })
})

function readable(file: string): string | null {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return null // write-only
  }
}

/** The host uid of the live process whose cmdline contains `needle`, or null. */
function hostUidOf(needle: string): number | null {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) continue
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      if (/^State:\s+Z/m.test(status)) continue
      return Number(/^Uid:\s+(\d+)/m.exec(status)![1])
    } catch {
      // gone meanwhile
    }
  }
  return null
}
