import { chownSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Branch, Workspace } from '../../src/index.js'
import { CLI } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { underTerminal } from '../helpers/underTerminal.js'
import { pollFor } from '../helpers/until.js'

describe('the sandbox runtime: no terminal, a seccomp filter, never host uid 0', () => {
  const root = process.getuid?.() === 0
  const callers = root ? (['root', 'nobody'] as const) : (['this user'] as const)
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', NO_COLOR: '1', TERM: 'xterm' }

  /** Pushes a command into every terminal it can reach: /dev/tty and its stdin, stdout, stderr. */
  const INJECT = `
import errno, fcntl, os, termios
def push(fd):
    for c in b'id > /tmp/x\\n':
        fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
for name in ['/dev/tty', 0, 1, 2]:
    try:
        push(os.open(name, os.O_RDWR) if isinstance(name, str) else name)
        print(name, 'INJECTED')
    except OSError as e:
        print(name, errno.errorcode[e.errno])
print('a tty:', os.isatty(0))
`

  /** The errno each denied call gives, 0 where it went through (x86-64 numbers; arguments that fail late, never harm). */
  const CALLS = `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
calls = {
  'keyctl': (250, 0, -3, 0),            # KEYCTL_GET_KEYRING_ID of the session keyring
  'add_key': (248, b'user', b'fp', b'v', 1, -3),
  'request_key': (249, b'user', b'fp', None, 0),
  'bpf': (321, 9999, None, 0),          # an unknown command: EINVAL when bpf is reached
  'perf_event_open': (298, None, 0, -1, -1, 0),
  'unshare': (272, 0),
  'open_by_handle_at': (304, -1, None, 0),
  'userfaultfd': (323, 0),
}
for name, args in calls.items():
    ctypes.set_errno(0)
    libc.syscall(*args)
    print(name, ctypes.get_errno())
`

  /** A workspace with the probes, owned by `caller`, with a store. */
  async function probeWorkspace(caller: string): Promise<string> {
    const dir = await makeWorkspace({ 'inject.py': INJECT, 'calls.py': CALLS }, tempDir(`fp-sec-${caller}`))
    if (caller === 'nobody') for (const p of [dir, join(dir, 'inject.py'), join(dir, 'calls.py')]) chownSync(p, 65534, 65534)
    return dir
  }

  const forkpoint = (dir: string, caller: string, args: string[]) =>
    underTerminal([CLI, '--dir', dir, ...args], { cwd: dir, env, ...(caller === 'nobody' ? { as: 'nobody' as const } : {}) })

  describe.each(callers)('as %s, from a terminal', (caller) => {
    let dir: string
    beforeAll(async () => {
      dir = await probeWorkspace(caller)
      expect((await forkpoint(dir, caller, ['branch', 'probe'])).code).toBe(0)
    })

    it('run: the command has no terminal of the caller, and TIOCSTI pushes nothing into it', async () => {
      const session = await forkpoint(dir, caller, ['run', '--', 'python3', 'inject.py'])
      expect(session.code).toBe(0)
      expect(session.output).not.toContain('INJECTED')
      expect(session.output).toContain('/dev/tty ENXIO')
      expect(session.queued).toBe('')
    })

    it("shell: the shell gets a pty of its own, relayed; TIOCSTI pushes nothing into the caller's terminal", async () => {
      const session = await forkpoint(dir, caller, ['shell', 'probe', '-c', 'python3 inject.py; tty; echo relayed-$((6*7))'])
      expect(session.code).toBe(0)
      expect(session.output).toContain('a tty: True')
      expect(session.output).toContain('/dev/pts/0') // the sandbox's own devpts
      expect(session.output).toContain('relayed-42')
      expect(session.output).not.toContain('INJECTED')
      expect(session.queued).toBe('')
    })

    it.each([
      ['run', ['run', '--']],
      ['shell in a branch', ['shell', 'probe', '-c']],
    ])('%s: denies the calls of the seccomp filter with EPERM, and ordinary programs still work', async (_, command) => {
      const script = 'python3 calls.py && node -e "console.log(6*7)" && git --version >/dev/null && echo programs-ok'
      const session = await forkpoint(dir, caller, [...command, ...(command[0] === 'run' ? ['sh', '-c', script] : [script])])
      const errnos = Object.fromEntries([...session.output.matchAll(/^(\w+) (\d+)\r?$/gm)].map((m) => [m[1], Number(m[2])]))
      expect(errnos).toEqual({ keyctl: 1, add_key: 1, request_key: 1, bpf: 1, perf_event_open: 1, unshare: 1, open_by_handle_at: 1, userfaultfd: 1 })
      expect(session.output).toContain('42')
      expect(session.output).toContain('programs-ok')
    })
  })

  describe.runIf(root)("root's sandbox and the host's uid 0", () => {
    let ws: Workspace
    let live: Branch
    beforeAll(async () => {
      ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
      // a persistent branch is mounted where every tool sees it: an overlay under the workspace
      live = await ws.branch('live', { persistent: true })
    })
    afterAll(() => live.abort())

    /** The host uid of a sandboxed `sleep`, started by `start`, then the run's result. */
    async function hostUidOfSleep(start: (argv: string[]) => Promise<{ warnings: string[] }>) {
      const marker = `${Math.floor(Math.random() * 1e6) + 1000}`
      const running = start(['sleep', marker])
      const found = await pollFor(`the sandboxed sleep ${marker}`, () => sleeping(marker) ?? undefined)
      process.kill(found.pid, 'SIGKILL')
      return { uid: found.uid, warnings: (await running).warnings }
    }

    it('a plain run with an overlay branch live under the workspace runs as an unprivileged host uid, and says what it leaves out', async () => {
      const { uid, warnings } = await hostUidOfSleep((argv) => ws.run(argv))
      expect(uid).not.toBe(0)
      expect(warnings.join('\n')).toMatch(/not shown in the sandbox/)
    })

    it('forkpoint shell in an overlay branch that runs as the host uid 0 says so', async () => {
      const dir = await probeWorkspace('root')
      expect((await forkpoint(dir, 'root', ['branch', 'probe'])).code).toBe(0)
      const { uid } = await hostUidOfSleep((argv) => live.run(argv)) // the same kind of branch
      const session = await forkpoint(dir, 'root', ['shell', 'probe', '-c', 'true'])
      expect(session.code).toBe(0)
      expect(/warning: .*host's uid 0/.test(session.output)).toBe(uid === 0)
    })

    it('a run in an overlay branch says in its warnings exactly when it runs as the host uid 0', async () => {
      const { uid, warnings } = await hostUidOfSleep((argv) => live.run(argv))
      expect(/host's uid 0/.test(warnings.join('\n'))).toBe(uid === 0)
    })
  })

  /** The pid and host uid of a running `sleep MARKER`, or null while there is none. */
  function sleeping(marker: string): { pid: number; uid: number } | null {
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') !== `sleep\0${marker}\0`) continue
        const status = readFileSync(`/proc/${pid}/status`, 'utf8')
        if (!/^State:\s+Z/m.test(status)) return { pid: Number(pid), uid: Number(/^Uid:\s+(\d+)/m.exec(status)![1]) }
      } catch {
        // gone meanwhile
      }
    }
    return null
  }
})
