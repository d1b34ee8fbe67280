import { spawn } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { SandboxError } from '../errors/index.js'
import { readTextOrNullSync } from '../util/fsx.js'
import { type RunCgroup, makeRunCgroup } from './cgroup.js'
import { sandboxInit } from './initScript.js'
import { makeRunDir } from './runDirs.js'
import { type SharedHolder, ownSharedHolder, ownUserNamespace, privileged } from './namespaceHolder.js'
import { type SandboxLimits, parseDuration, rlimitsOf } from './limits.js'

export type NetMode = 'none' | 'host'

export interface SandboxSpec extends SandboxLimits {
  /** The directory to show at `workspace` inside the sandbox (a branch view, or the workspace itself). */
  view: string
  /** The path the view is mounted at inside the sandbox: the workspace's own path. */
  workspace: string
  /** argv, or one string run by `sh -c`. */
  cmd: string | string[]
  /** Working directory inside the sandbox (default: the workspace path). */
  cwd?: string
  /** "none": a new network namespace with only `lo` (the host's 127.0.0.1 is out of reach). Default "none". */
  net?: NetMode
  /** The command's environment (default: this process's). */
  env?: NodeJS.ProcessEnv
  /** Bytes fed to the command's stdin (default: none, stdin is /dev/null). */
  input?: string | Buffer
  /** A process holding the mount (and maybe user) namespace in which `view` is mounted (overlay branches). */
  namespaceHolder?: number
  /** A directory under the workspace that stays read-only inside (the store, when the view is the workspace itself). */
  protect?: string
  /** Aborting kills the whole process tree, as a timeout does. */
  signal?: AbortSignal
}

export interface SandboxResult {
  /** The command's exit status; 128 + N when killed by signal N (137 on timeout). */
  exitCode: number
  stdout: string
  stderr: string
  durationMs: number
  timedOut: boolean
  /** How each requested limit was enforced: a cgroup where one is ours to use, else an rlimit. */
  limits: { memory?: 'cgroup' | 'rlimit'; pids?: 'cgroup' | 'rlimit'; cpu?: 'rlimit' }
}

/**
 * Run a command in fresh user, mount, PID (and with `net: "none"`, network) namespaces,
 * unprivileged, with `view` mounted writable at the workspace's own path and everything
 * else read-only or on throwaway tmpfs. Timeout or abort kills the whole process tree
 * (the PID namespace dies with its first process).
 * @throws {SandboxError} when the namespaces or mounts cannot be set up here, or on bad limits
 */
export async function runSandboxed(spec: SandboxSpec): Promise<SandboxResult> {
  const argv = typeof spec.cmd === 'string' ? ['sh', '-c', spec.cmd] : spec.cmd
  if (argv.length === 0 || argv[0] === '') throw new SandboxError('no command to run', {})
  const timeoutMs = spec.timeout === undefined ? 0 : parseDuration(spec.timeout)
  const { as, nproc, cpu } = rlimitsOf(spec)
  const cgroups = (await Promise.all([as ? makeRunCgroup('memory', as) : null, nproc ? makeRunCgroup('pids', nproc) : null])).filter((c): c is RunCgroup => c !== null)
  const via = (c: 'memory' | 'pids') => (cgroups.some((g) => g.controller === c) ? ('cgroup' as const) : ('rlimit' as const))
  const limits: SandboxResult['limits'] = { ...(as ? { memory: via('memory') } : {}), ...(nproc ? { pids: via('pids') } : {}), ...(cpu ? { cpu: 'rlimit' as const } : {}) }
  const net = spec.net ?? 'none'
  if (net !== 'none' && net !== 'host') throw new SandboxError(`unknown network mode ${JSON.stringify(net)} (none or host)`, { net })
  const holder = spec.namespaceHolder
  // Our own shared holder starts the sandbox itself (a fork of a small process, already inside its namespaces).
  const server = holder === undefined ? null : await ownSharedHolder(holder)
  const enterUser = server ? !privileged : holder !== undefined && (await ownUserNamespace(holder))
  const rlimits = [limits.memory === 'rlimit' ? as : 0, limits.pids === 'rlimit' ? nproc : 0, cpu].map(String)
  const args = ['-e', sandboxInit(), '--', server ? 'self' : holder === undefined ? '' : String(holder), enterUser ? '1' : '0', spec.view, spec.workspace, spec.cwd ?? spec.workspace, net === 'none' ? '1' : '0']
  args.push(String(process.getuid?.() ?? 0), String(process.getgid?.() ?? 0), ...rlimits, spec.protect ?? '', cgroups.map((c) => c.procs).join(':'), ...argv)
  try {
    return await (server ? launchInHolder(server, args, spec, timeoutMs, limits) : launch(args, spec, timeoutMs, limits))
  } finally {
    await Promise.all(cgroups.map((c) => c.remove()))
  }
}

async function launch(args: string[], spec: SandboxSpec, timeoutMs: number, limits: SandboxResult['limits']): Promise<SandboxResult> {
  const started = performance.now()
  // Its own process group: a kill that lands while perl is still forking (before the
  // init's PDEATHSIG is armed) must still take the namespace's init with it.
  const child = spawn('perl', args, { env: spec.env ?? process.env, detached: true, stdio: [spec.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', 'pipe'] })
  if (spec.input !== undefined) child.stdin!.end(spec.input)
  const stdout = collect(child.stdout!)
  const stderr = collect(child.stderr!)
  const ready = collect(child.stdio[3] as Readable)
  const switches = killSwitches(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      child.kill('SIGKILL') // the group is gone already, or the spawn failed
    }
  }, timeoutMs, spec.signal)
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.once('error', (err) => reject(new SandboxError(`cannot start the sandbox (perl): ${err.message}`, { file: 'perl' }, { cause: err })))
    child.once('close', (code, signal) => resolve(code ?? 128 + signalNumber(signal)))
  }).finally(switches.dispose)
  return settle({ exitCode, stdout: stdout(), stderr: stderr(), ready: ready() }, switches, started, limits)
}

/**
 * The same through our shared namespace holder: it forks the sandbox with its stdio and
 * readiness fd on files of a private temp directory (read once it has ended), and says
 * its pid (to kill its process group) and its exit status.
 */
async function launchInHolder(server: SharedHolder, args: string[], spec: SandboxSpec, timeoutMs: number, limits: SandboxResult['limits']): Promise<SandboxResult> {
  const started = performance.now()
  // Synchronous file calls: a few tiny files, each a thread-pool round trip otherwise.
  const dir = makeRunDir()
  try {
    const files = { stdin: spec.input === undefined ? '' : join(dir, 'stdin'), stdout: join(dir, 'stdout'), stderr: join(dir, 'stderr'), ready: join(dir, 'ready') }
    if (spec.input !== undefined) writeFileSync(files.stdin, spec.input)
    const run = server.run(files, ['perl', ...args], spec.env ?? process.env)
    const switches = killSwitches(() => {
      run.pid.then((pid) => process.kill(-pid, 'SIGKILL')).catch(() => undefined) // the group is gone already
    }, timeoutMs, spec.signal)
    const exit = await run.exit.finally(switches.dispose)
    const [stdout, stderr, ready] = [files.stdout, files.stderr, files.ready].map((f) => readTextOrNullSync(f) ?? '') as [string, string, string]
    return settle({ exitCode: exit.code ?? 128 + exit.signal, stdout, stderr, ready }, switches, started, limits)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A run's kill switches: its wall-clock limit and the caller's signal. `dispose` once it has ended. */
function killSwitches(kill: () => void, timeoutMs: number, signal: AbortSignal | undefined): { timedOut: boolean; killed: boolean; dispose(): void } {
  const switches = { timedOut: false, killed: false, dispose }
  const fire = () => {
    switches.killed = true
    kill()
  }
  const timer = timeoutMs > 0 ? setTimeout(() => ((switches.timedOut = true), fire()), timeoutMs) : undefined
  if (signal?.aborted) fire()
  else signal?.addEventListener('abort', fire, { once: true })
  function dispose(): void {
    if (timer) clearTimeout(timer)
    signal?.removeEventListener('abort', fire)
  }
  return switches
}

/** A finished run as its result; a sandbox that never said it was ready (and was not killed) could not be set up. */
function settle(run: { exitCode: number; stdout: string; stderr: string; ready: string }, switches: { timedOut: boolean; killed: boolean }, started: number, limits: SandboxResult['limits']): SandboxResult {
  const durationMs = performance.now() - started
  if (!run.ready.includes('ready') && !switches.killed) {
    throw new SandboxError(`the sandbox could not be set up: ${run.stderr.trim().split('\n').pop() || `exit ${run.exitCode}`}`, { exitCode: run.exitCode, stderr: run.stderr })
  }
  return { exitCode: switches.timedOut ? 137 : run.exitCode, stdout: run.stdout, stderr: run.stderr, durationMs, timedOut: switches.timedOut, limits }
}

function collect(stream: Readable): () => string {
  const chunks: Buffer[] = []
  stream.on('data', (c: Buffer) => chunks.push(c))
  return () => Buffer.concat(chunks).toString('utf8')
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGXCPU: 24 }
  return (signal && numbers[signal]) ?? 9
}
