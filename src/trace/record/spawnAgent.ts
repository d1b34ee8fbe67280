import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import type { Duplex } from 'node:stream'
import { SandboxError, UsageError } from '../../errors/index.js'
import { type Fields, encodeMessage } from '../../sandbox/messages.js'
import { runtimeBinary } from '../../sandbox/runtimeBinary.js'
import { builtEntry } from '../../util/builtEntry.js'
import { exitStatus } from '../../util/exitStatus.js'

/** How the agent's network was closed: a network namespace of its own (plus the in-process guard), or the guard alone. */
export type Isolation = 'none' | 'netns' | 'guard'

/**
 * Where the agent's stdout goes: ours, our stderr (so `--json` stdout stays clean), or
 * captured. A captured agent runs for a program, not a terminal, and gets no stdin: ours
 * may be that program's channel (the MCP server's JSON-RPC).
 */
export type AgentStdout = 'inherit' | 'stderr' | 'capture'

export interface AgentExit {
  exitCode: number
  isolation: Isolation
  stdout: string
  stderr: string
}

let netnsWorks: boolean | null = null

/** Whether this machine lets us give a child its own empty network namespace (asked of the sandbox runtime once). */
export function networkNamespaceAvailable(): boolean {
  if (netnsWorks === null) {
    try {
      netnsWorks = spawnSync(runtimeBinary(), ['probe-net'], { stdio: 'ignore' }).status === 0
    } catch {
      netnsWorks = false // the runtime is not built: the in-process guard alone
    }
  }
  return netnsWorks
}

/**
 * Run the agent command and wait for it. With `offline`, the child gets a network
 * namespace with only loopback up, through the sandbox runtime (`root=host`: its file
 * system stays the caller's) when the kernel allows one (`bridgeSocket`: 127.0.0.1 is
 * bridged to the replay proxy's unix socket, nothing else). With `egress`, a namespace
 * whose every TCP connection and DNS query go to the egress server at that socket (its relay
 * showing the token), and nothing else: required, never left out.
 */
export async function spawnAgent({
  command,
  env,
  cwd,
  offline = false,
  bridgeSocket,
  egress,
  stdout = 'inherit',
  signal,
}: {
  command: string[]
  env: NodeJS.ProcessEnv
  cwd: string
  offline?: boolean
  bridgeSocket?: string
  egress?: { socket: string; token: string }
  stdout?: AgentStdout
  signal?: AbortSignal
}): Promise<AgentExit> {
  if (command.length === 0) throw new UsageError('no agent command given (put it after --)')
  const netns = (offline || egress !== undefined) && networkNamespaceAvailable()
  if (egress !== undefined && !netns)
    throw new SandboxError(
      "recording through the egress proxy needs a network namespace of the agent's own, which this machine does not give (record in-process or with --proxy instead)",
    )
  const bridge = bridgeSocket ? [process.execPath, builtEntry('trace/capture', 'netnsBridge.js'), bridgeSocket, '--'] : []
  const stdio = [stdout === 'capture' ? 'ignore' : 'inherit', stdout === 'inherit' ? 'inherit' : 'pipe', stdout === 'capture' ? 'pipe' : 'inherit'] as const
  const net: Fields =
    egress === undefined
      ? [['net', 'none']]
      : [
          ['net', 'proxy'],
          ['egress', egress.socket],
          ['egress-token', egress.token],
        ]
  const child = netns ? inNetworkNamespace([...bridge, ...command], net, env, cwd, stdio) : spawn(command[0]!, command.slice(1), { cwd, env, stdio: [...stdio] })
  let out = ''
  let err = ''
  child.stdout?.on('data', (c: Buffer) => (stdout === 'capture' ? (out += c.toString()) : process.stderr.write(c)))
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()))
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal)
  const onInt = forward('SIGINT')
  const onTerm = forward('SIGTERM')
  process.on('SIGINT', onInt).on('SIGTERM', onTerm)
  signal?.addEventListener('abort', () => child.kill('SIGTERM'))
  try {
    const exitCode = await new Promise<number>((resolve, reject) => {
      child.once('error', (e) => reject(new UsageError(`cannot start ${command[0]}: ${e.message}`, { command })))
      child.once('close', (code, signal) => resolve(exitStatus(code, signal)))
    })
    return { exitCode, isolation: netns ? 'netns' : offline ? 'guard' : 'none', stdout: out, stderr: err }
  } finally {
    process.off('SIGINT', onInt).off('SIGTERM', onTerm)
  }
}

/** The runtime in `root=host` mode: it unshares the network (and, unprivileged, a user namespace), brings lo up (and the egress), and runs argv. */
function inNetworkNamespace(
  argv: string[],
  net: Fields,
  env: NodeJS.ProcessEnv,
  cwd: string,
  stdio: readonly ['inherit' | 'ignore', 'inherit' | 'pipe', 'inherit' | 'pipe'],
): ChildProcess {
  const child = spawn(runtimeBinary(), ['run'], { cwd, stdio: [...stdio, 'pipe'] })
  const control = child.stdio[3] as Duplex
  control.on('error', () => undefined)
  control.on('data', () => undefined) // `event=ready`; a setup error also ends in exit 125 with its reason on stderr
  const envFields = Object.entries(env).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [['env', `${k}=${v}`]]))
  control.end(encodeMessage([['root', 'host'], ...net, ['cwd', cwd], ...envFields, ...argv.map((a): [string, string] => ['argv', a])]))
  return child
}
