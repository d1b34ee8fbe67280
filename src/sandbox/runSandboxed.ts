import { spawn } from 'node:child_process'
import { isAbsolute, resolve } from 'node:path'
import type { Duplex } from 'node:stream'
import { SandboxError } from '../errors/index.js'
import { exitStatus } from '../util/exitStatus.js'
import { type RunCgroup, makeRunCgroup, reapLeftoverCgroups } from './cgroup.js'
import { type Fields, encodeMessage, messageReader } from './messages.js'
import { DEFAULT_TIMEOUT, type SandboxLimits, parseDuration, rlimitsOf } from './limits.js'
import { runtimeBinary } from './runtimeBinary.js'
import { SANDBOX_HOME, sandboxEnv } from './sandboxEnv.js'

export type NetMode = 'none' | 'host'

/**
 * A network namespace of the sandbox's own whose only way out is forkpoint's effects proxy:
 * every TCP connection and DNS query is turned to it (docs/effects.md).
 */
export interface EgressProxy {
  /** The proxy's unix socket; each connection starts with a line naming the run's token and its original destination. */
  socket: string
  /** The secret the sandbox's relay shows the proxy (given to the runtime, never to the command): a program that finds the socket cannot pass for it. */
  token: string
  /** The CA certificate (PEM text) the proxy's certificates are signed by: the only one the sandbox's TLS clients trust. */
  ca: string
}

/** Where the sandbox's own TLS clients find the proxy's CA (the standard variables point here). */
export const SANDBOX_CA_BUNDLE = '/run/forkpoint/ca.pem'
const CA_VARIABLES = ['SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'GIT_SSL_CAINFO'] as const

/** Host files hidden in every sandbox even where a system directory is shown (secrets a root caller could read). */
export const HIDDEN_HOST_FILES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/sudoers.d', '/etc/ssh', '/etc/ssl/private'] as const

/** Bytes of each of stdout and stderr a result keeps in memory; the rest streams to `onOutput` only. */
export const OUTPUT_CAP = 16 * 1024 * 1024

export interface SandboxSpec extends SandboxLimits {
  /** The directory to show at `workspace` inside the sandbox (a branch view, or the workspace itself). */
  view: string
  /** The path the view is mounted at inside the sandbox: the workspace's own path. */
  workspace: string
  /** argv, or one string run by `sh -c`. */
  cmd: string | string[]
  /** Working directory inside the sandbox (default: the workspace path). */
  cwd?: string
  /**
   * "none": a new network namespace with only `lo` (the host's 127.0.0.1 is out of reach); "host": the host's;
   * an egress proxy: a namespace of its own leading only to that proxy. Default "none".
   */
  net?: NetMode | EgressProxy
  /** The command's whole environment (default: `sandboxEnv(process.env)`: the allowlist, HOME the sandbox's own). */
  env?: NodeJS.ProcessEnv
  /** Bytes fed to the command's stdin (default: none, stdin is /dev/null). */
  input?: string | Buffer
  /**
   * "inherit": the command uses this process's stdin, stdout and stderr; nothing is kept in the result. When stdin is a
   * terminal, the command gets a pty of its own that the runtime relays to it (a shell), never the terminal itself.
   */
  stdio?: 'inherit'
  /** A process holding the mount (and maybe user) namespace in which `view` is mounted (overlay branches). */
  namespaceHolder?: number
  /** Host paths shown read-only inside at their own path (a socket, a cache, a toolchain); nothing else of the host is. */
  expose?: string[]
  /** Paths inside the sandbox to hide (the store, when it lies under the workspace). */
  hide?: string[]
  /** Paths of the view bound onto themselves, so the command cannot rename, remove or replace them (a `.git`). */
  pin?: string[]
  /** Paths of the view bound onto themselves read-only (a `.git/config`, `.git/hooks`). */
  protect?: string[]
  /** Each chunk of output as the command writes it. */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void
  /** Aborting kills the whole process tree, as a timeout does; the promise settles once it is gone. */
  signal?: AbortSignal
}

export type LimitVia = 'cgroup' | 'rlimit'

export interface SandboxResult {
  /** The command's exit status; 128 + N when killed by signal N (137 on timeout or the caller's signal). */
  exitCode: number
  /** Its output, the first OUTPUT_CAP bytes of each stream (see `truncated`). */
  stdout: string
  stderr: string
  /** True when a stream wrote more than OUTPUT_CAP bytes (all of it went to `onOutput`). */
  truncated: boolean
  durationMs: number
  timedOut: boolean
  /**
   * True when the kernel killed a process of the command for reaching the memory limit. Known
   * only where the limit is a cgroup (`limits.memory === 'cgroup'`); under RLIMIT_AS an
   * allocation past the limit fails instead, and the command reports that itself.
   */
  oomKilled: boolean
  /** How each requested limit was enforced: a cgroup where one is ours to use, else an rlimit. */
  limits: { memory?: LimitVia; pids?: LimitVia; cpu?: 'rlimit' }
  /** Each limit enforced more weakly than asked, and each isolation weaker than docs/sandbox.md promises, in words. */
  warnings: string[]
}

/**
 * Run a command in its own user, mount, PID, UTS, IPC (and with `net: "none"`, network)
 * namespaces, through the sandbox runtime (native/sandbox.c): a new root holding the
 * system directories read-only, `view` writable at the workspace's own path, a private
 * /tmp, HOME and /run, a minimal /dev; never with privilege over the host (docs/sandbox.md).
 * Output streams to `onOutput` as it is written. Timeout or abort kills the whole process
 * tree, gone before the promise settles.
 * @throws {SandboxError} when the namespaces or mounts cannot be set up here, or on bad limits
 */
export async function runSandboxed(spec: SandboxSpec): Promise<SandboxResult> {
  const argv = typeof spec.cmd === 'string' ? ['sh', '-c', spec.cmd] : spec.cmd
  if (argv.length === 0 || argv[0] === '') throw new SandboxError('no command to run', {})
  const timeoutMs = timeoutOf(spec.timeout)
  const { as, nproc, cpu } = rlimitsOf(spec)
  const net = spec.net ?? 'none'
  if (typeof net === 'string' && net !== 'none' && net !== 'host') throw new SandboxError(`unknown network mode ${JSON.stringify(net)} (none or host)`, { net })
  for (const path of spec.expose ?? []) if (!isAbsolute(path)) throw new SandboxError(`--expose needs an absolute path, not ${JSON.stringify(path)}`, { path })
  const [made] = await Promise.all([Promise.all([as ? makeRunCgroup('memory', as) : null, nproc ? makeRunCgroup('pids', nproc) : null]), reapLeftoverCgroups()])
  const cgroups = made.filter((c): c is RunCgroup => c !== null)
  const via = (c: 'memory' | 'pids'): LimitVia => (cgroups.some((g) => g.controller === c) ? 'cgroup' : 'rlimit')
  const limits: SandboxResult['limits'] = { ...(as ? { memory: via('memory') } : {}), ...(nproc ? { pids: via('pids') } : {}), ...(cpu ? { cpu: 'rlimit' as const } : {}) }
  const fields: Fields = [
    ['view', spec.view],
    ['workspace', spec.workspace],
    ['cwd', spec.cwd ?? spec.workspace],
    ...netFields(net),
    ['home', SANDBOX_HOME],
    ...(spec.stdio === 'inherit' ? [['terminal', 'pty'] as [string, string]] : []),
    ...(spec.namespaceHolder === undefined ? [] : [['holder', String(spec.namespaceHolder)] as [string, string]]),
    ...(as ? [['scratch-size', String(as)] as [string, string]] : []),
    ...(limits.memory === 'rlimit' ? [['rlimit-as', String(as)] as [string, string]] : []),
    ...(limits.pids === 'rlimit' ? [['rlimit-nproc', String(nproc)] as [string, string]] : []),
    ...(cpu ? [['rlimit-cpu', String(cpu)] as [string, string]] : []),
    ...cgroups.map((c): [string, string] => ['cgroup', c.procs]),
    ...(spec.expose ?? []).map((p): [string, string] => ['expose', resolve(p)]),
    ...[...HIDDEN_HOST_FILES, ...(spec.hide ?? [])].map((p): [string, string] => ['hide', p]),
    ...(spec.pin ?? []).map((p): [string, string] => ['pin', p]),
    ...(spec.protect ?? []).map((p): [string, string] => ['protect', p]),
    ...envFields({ ...(spec.env ?? sandboxEnv(process.env)), ...(typeof net === 'string' ? {} : caVariables()) }),
    ...argv.map((a): [string, string] => ['argv', a]),
  ]
  try {
    const run = await launch(fields, spec, timeoutMs)
    const { weaker, ...launched } = run
    const oomKilled = (await Promise.all(cgroups.map((c) => c.oomKills()))).some((n) => n > 0)
    return { ...launched, oomKilled, limits, warnings: [...weaker, ...weakLimits(limits, spec, as)] }
  } finally {
    await Promise.all(cgroups.map((c) => c.remove()))
  }
}

function timeoutOf(timeout: number | string | undefined): number {
  if (timeout === 0 || timeout === '0') return 0
  return parseDuration(timeout ?? DEFAULT_TIMEOUT)
}

function netFields(net: NetMode | EgressProxy): Fields {
  if (typeof net === 'string') return [['net', net]]
  return [
    ['net', 'proxy'],
    ['egress', net.socket],
    ['egress-token', net.token],
    ['ca', net.ca],
  ]
}

/** The standard variables that point TLS clients (OpenSSL, Node, Python requests, curl, git) at the CA file `path`. */
export function caVariables(path = SANDBOX_CA_BUNDLE): Record<string, string> {
  return Object.fromEntries(CA_VARIABLES.map((name) => [name, path]))
}

function envFields(env: NodeJS.ProcessEnv): Fields {
  return Object.entries(env).flatMap(([k, v]): Fields => (v === undefined ? [] : [['env', `${k}=${v}`]]))
}

function weakLimits(limits: SandboxResult['limits'], spec: SandboxSpec, as: number): string[] {
  const warnings: string[] = []
  if (limits.memory === 'rlimit')
    warnings.push(
      `memory ${spec.memory} is only a per-process address-space limit (RLIMIT_AS; no memory cgroup is ours to use here): processes together can use more (the sandbox's tmpfs is capped at ${as} bytes)`,
    )
  if (limits.pids === 'rlimit')
    warnings.push(`pids ${spec.pids} is only RLIMIT_NPROC (no pids cgroup is ours to use here): it counts every process of this user, inside the sandbox or not`)
  return warnings
}

/** What the runtime said of the run; `weaker`: where the sandbox is weaker than docs/sandbox.md promises. */
type Launched = Omit<SandboxResult, 'limits' | 'warnings' | 'oomKilled'> & { weaker: string[] }

/**
 * Spawn the runtime with the request on fd 3, stdio streamed. A kill is SIGTERM to the
 * runtime, which kills the sandbox's PID 1 and exits once the whole namespace is gone.
 */
async function launch(fields: Fields, spec: SandboxSpec, timeoutMs: number): Promise<Launched> {
  const started = performance.now()
  const inherit = spec.stdio === 'inherit'
  const child = spawn(runtimeBinary(), ['run'], {
    stdio: inherit ? ['inherit', 'inherit', 'inherit', 'pipe'] : [spec.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', 'pipe'],
  })
  child.stdin?.on('error', () => undefined) // a command that does not read its input
  if (spec.input !== undefined) child.stdin?.end(spec.input)
  const stdout = inherit ? nothingKept : keep(child.stdout!, 'stdout', spec.onOutput)
  const stderr = inherit ? nothingKept : keep(child.stderr!, 'stderr', spec.onOutput)
  const control = child.stdio[3] as Duplex
  let ready = false
  let setupError = ''
  const weaker: string[] = []
  control.on('error', () => undefined)
  control.on(
    'data',
    messageReader((f) => {
      if (f['event'] === 'ready') ready = true
      if (f['event'] === 'ready' && f['warning']) weaker.push(f['warning'])
      if (f['event'] === 'error') setupError = f['message'] ?? 'unknown error'
    }),
  )
  control.write(encodeMessage(fields))
  const switches = killSwitches(() => child.kill('SIGTERM'), timeoutMs, spec.signal)
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.once('error', (err) => reject(new SandboxError(`cannot start the sandbox runtime: ${err.message}`, { file: runtimeBinary() }, { cause: err })))
    child.once('close', (code, signal) => resolve(exitStatus(code, signal)))
  }).finally(switches.dispose)
  if (!ready && !switches.killed) throw new SandboxError(`the sandbox could not be set up: ${setupError || `exit ${exitCode}`}`, { exitCode, stderr: stderr().text })
  const out = stdout()
  const err = stderr()
  return {
    exitCode: switches.timedOut || (switches.killed && exitCode === SIGTERM_STATUS) ? 137 : exitCode,
    stdout: out.text,
    stderr: err.text,
    truncated: out.truncated || err.truncated,
    durationMs: performance.now() - started,
    timedOut: switches.timedOut,
    weaker,
  }
}

/**
 * The runtime's status when the SIGTERM a kill switch sends ends it before it has set its
 * handler (a busy host): the command was killed all the same, as the handler reports it.
 */
const SIGTERM_STATUS = 128 + 15

/** A run's kill switches: its wall-clock limit and the caller's signal. `dispose` once it has ended. */
function killSwitches(kill: () => void, timeoutMs: number, signal: AbortSignal | undefined): { timedOut: boolean; killed: boolean; dispose: () => void } {
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

const nothingKept = (): { text: string; truncated: boolean } => ({ text: '', truncated: false })

/** Streams each chunk on, keeps the first OUTPUT_CAP bytes. */
function keep(stream: NodeJS.ReadableStream, name: 'stdout' | 'stderr', onOutput: SandboxSpec['onOutput']): () => { text: string; truncated: boolean } {
  const chunks: Buffer[] = []
  let kept = 0
  let truncated = false
  stream.on('data', (c: Buffer) => {
    onOutput?.(name, c)
    if (kept >= OUTPUT_CAP) return void (truncated = true)
    const part = c.subarray(0, OUTPUT_CAP - kept)
    truncated ||= part.length < c.length
    chunks.push(part)
    kept += part.length
  })
  return () => ({ text: Buffer.concat(chunks).toString('utf8'), truncated })
}
