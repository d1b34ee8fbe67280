import { spawn } from 'node:child_process'

export interface TerminalSession {
  /** What was written on the terminal. */
  output: string
  /** Input queued on the terminal once the command exited: what its shell would read (and run) next. */
  queued: string
  code: number
}

/**
 * Runs `argv` as a command typed at a terminal runs: in a new session whose controlling
 * terminal is a pty this helper owns (python3's `os.forkpty`). `as: 'nobody'` runs the whole
 * session as nobody. Keystrokes a process pushed into the terminal with TIOCSTI show up in
 * `queued`.
 */
export async function underTerminal(argv: string[], { cwd, env, as }: { cwd: string; env: Record<string, string>; as?: 'nobody' }): Promise<TerminalSession> {
  const python = ['/usr/bin/python3', '-c', DRIVER, ...argv]
  const command = as === 'nobody' ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...python] : python
  const child = spawn(command[0]!, command.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (c: Buffer) => (out += c.toString()))
  await new Promise((resolve) => child.once('close', resolve))
  return JSON.parse(out) as TerminalSession
}

const DRIVER = `
import fcntl, json, os, struct, subprocess, sys, termios
report_r, report_w = os.pipe()
pid, master = os.forkpty()
if pid == 0:
    code = subprocess.run(sys.argv[1:]).returncode
    waiting = struct.unpack('i', fcntl.ioctl(0, termios.FIONREAD, b'\\0\\0\\0\\0'))[0]
    queued = os.read(0, waiting).decode(errors='replace') if waiting else ''
    os.write(report_w, json.dumps({'queued': queued, 'code': code}).encode())
    os._exit(0)
os.close(report_w)
output = b''
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    output += chunk
os.waitpid(pid, 0)
report = json.loads(os.read(report_r, 1 << 20))
report['output'] = output.decode(errors='replace')
print(json.dumps(report))
`
