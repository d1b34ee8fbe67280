import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { CLI, type CliResult } from './cli.js'
import { until } from './until.js'

export type User = 'root' | 'nobody'

/** `argv` as `user`: nobody's through setpriv, the test's own user (root when it runs as root) as it is. */
function asUser(user: User, argv: string[]): string[] {
  return user === 'nobody' ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', ...argv] : argv
}

/** Run `argv` as `user` in `cwd` with a bare environment (and `env`), `input` on its stdin. */
export function runAsUser(user: User, argv: string[], { cwd, env = {}, input = '' }: { cwd: string; env?: Record<string, string>; input?: string }): Promise<CliResult> {
  const [file, ...args] = asUser(user, argv)
  return new Promise((resolve, reject) => {
    const child = spawn(file!, args, { cwd, env: { PATH: process.env['PATH'], HOME: '/tmp', NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
    let [stdout, stderr] = ['', '']
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.stdin.on('error', () => undefined) // a child that exits before reading its input
    child.stdin.end(input)
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

/** `forkpoint claude hook` as `user` in `dir`, `input` on its stdin. */
export function hookAs(user: User, dir: string, input: string, env: Record<string, string> = {}): Promise<CliResult> {
  return runAsUser(user, [CLI, 'claude', 'hook'], { cwd: dir, env, input })
}

/** `forkpoint serve` in `dir` as `user` (pushed to `children` to be stopped), once its socket is there; the socket's path. */
export async function serveAs(user: User, dir: string, children: ChildProcess[]): Promise<string> {
  const [file, ...args] = asUser(user, [CLI, 'serve'])
  const child = spawn(file!, args, { cwd: dir, env: { PATH: process.env['PATH'], HOME: '/tmp', NO_COLOR: '1' }, stdio: 'ignore' })
  children.push(child)
  const socket = join(dir, '.forkpoint', 'service.sock')
  await until(() => existsSync(socket) || child.exitCode !== null, `forkpoint serve in ${dir}`)
  if (child.exitCode !== null) throw new Error(`forkpoint serve in ${dir} exited ${child.exitCode}`)
  return socket
}

/** Node script: POST argv[2] (a file's bytes) to /v1/claude/hook on the socket argv[1]; prints the status and the answer's start, or the connection's error code. */
const POST_HOOK = `const [socketPath, file] = process.argv.slice(1)
require('http').request({ socketPath, method: 'POST', path: '/v1/claude/hook', headers: { 'content-type': 'application/json' } }, (r) => {
  let b = ''; r.on('data', (d) => (b += d)); r.on('end', () => console.log(r.statusCode + ' ' + b.slice(0, 300)))
}).on('error', (e) => console.log(e.code)).end(require('fs').readFileSync(file))`

/** A request to the hook's endpoint as `user`, its body read from `bodyFile` (which `user` can read): the status and the answer's start, or the error code. */
export async function postHookAs(user: User, socket: string, bodyFile: string): Promise<string> {
  return (await runAsUser(user, [process.execPath, '-e', POST_HOOK, socket, bodyFile], { cwd: '/' })).stdout.trim()
}

/** Node script: listen on the socket argv[1] (open to every user), appending whatever arrives to the file argv[2]. */
const LISTEN = `const [socket, log] = process.argv.slice(1)
require('net').createServer((s) => s.on('data', (d) => require('fs').appendFileSync(log, d))).listen(socket, () => require('fs').chmodSync(socket, 0o777))`

/** A listener of `user`'s on `socket` (pushed to `children` to be stopped) that keeps in `log` what callers send it: another user's service, as a victim's client would meet it. */
export async function listenAs(user: User, socket: string, log: string, children: ChildProcess[]): Promise<void> {
  const [file, ...args] = asUser(user, [process.execPath, '-e', LISTEN, socket, log])
  const child = spawn(file!, args, { cwd: '/', stdio: 'ignore' })
  children.push(child)
  await until(() => existsSync(socket) || child.exitCode !== null, `a listener on ${socket}`)
  if (child.exitCode !== null) throw new Error(`the listener on ${socket} exited ${child.exitCode}`)
}
