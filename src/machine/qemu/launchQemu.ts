import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { type Server, createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { AcceleratorFailedError, MachineError, MachineUnavailableError, UsageError } from '../../errors/index.js'
import { builtEntry } from '../../util/builtEntry.js'
import { pollUntil } from '../../util/pollUntil.js'
import { shellQuoted } from '../copy/shellQuoted.js'
import { qemuProcesses } from '../machineRecords.js'
import { type NetPlan, netRules } from '../net/machineNet.js'
import { qemuUser } from './qemuUser.js'
import { QEMU_BINARY, type QemuLaunch, qemuArgs } from './qemuArgs.js'
import { launcherScript } from './timeToLive.js'
import { stopped } from './watchdog.js'

export interface LaunchOptions {
  /** Outlive the caller (`forkpoint machine start`); otherwise QEMU gets SIGKILL when the caller goes, however it goes. */
  detached: boolean
  /** QEMU's own messages go here, for the report of a failed start. */
  log: string
  machine: string
  /** A time to live in seconds: the launcher kills QEMU that long after `startClock`; none when null or absent. */
  ttlSeconds?: number | null
  /** The network of a machine started with `--net egress` (its launch's `nic` is open); none when null or absent. */
  net?: NetPlan | null
}

/** A QEMU started: the process forkpoint spawned (its exit is QEMU's), QEMU's own pid, and what it was started with. */
export interface LaunchedQemu {
  child: ChildProcess
  pid: number
  launch: QemuLaunch
}

/**
 * Start QEMU in network, PID and mount namespaces of its own (and, unprivileged, a user
 * namespace mapping the caller to itself); a guest has only loopback. The first process
 * of the PID namespace is a shell that starts QEMU and waits for it, so `unshare` exits
 * with QEMU's status, and when that shell dies the kernel kills QEMU. Tied to the
 * caller, `setpriv --pdeathsig KILL` makes the kernel kill `unshare` when the thread that
 * spawned it exits (Node spawns from its main thread), and `--kill-child` the shell with
 * it: QEMU's own death signal would not hold, as the kernel clears it when root's QEMU
 * gives up root (`-runas`). With a time to live, the shell also keeps its clock
 * (`launcherScript`). Resolves once QEMU's pid is known.
 */
export async function launchQemu(launch: QemuLaunch, o: LaunchOptions): Promise<LaunchedQemu> {
  const tie = o.detached ? [] : ['setpriv', '--pdeathsig', 'KILL', '--']
  const script = launcherScript(o.ttlSeconds ?? null)
  if (o.net) return launchWithNet(launch, o, o.net, tie, script)
  const user = process.getuid?.() === 0 ? [] : ['--user', '--map-current-user']
  const isolate = ['unshare', ...user, '--net', '--mount', '--pid', '--fork', '--kill-child', '--']
  const child = spawnWithDisk([...tie, ...isolate, 'sh', '-c', script, 'sh', QEMU_BINARY, ...qemuArgs(launch)], launch.disk, o, [])
  return { child, pid: await qemuPid(child, launch, o), launch }
}

/**
 * A machine with `--net egress`: the host side of its network (`net/netHost.ts`, on the
 * host's network) starts the launcher and ends with it. The launcher's namespace is set up
 * as its root (real root, or the root of a user namespace mapping the caller): loopback
 * up, a default route into it, unprivileged ports from 0 (the relay and QEMU bind low
 * ones), and NAT rules (`netRules`); then the relay (`net/netnsRelay.ts`) starts, and QEMU,
 * neither with a capability (root's relay as QEMU's user, unprivileged ones with no
 * bounding set), so a guest that takes QEMU over cannot change the rules. Published ports
 * are listened on here, on the host's 127.0.0.1, and passed down to the relay.
 */
async function launchWithNet(launch: QemuLaunch, o: LaunchOptions, net: NetPlan, tie: string[], script: string): Promise<LaunchedQemu> {
  const socket = join(dirname(launch.sockets.qmp), 'egress.sock')
  const listeners = await publishedListeners(net)
  try {
    const user = qemuUser()
    const powerless = ['setpriv', '--inh-caps=-all', '--bounding-set=-all', '--']
    const relayUser = user ? ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', ...powerless.slice(1)] : powerless
    const isolate = ['unshare', ...(user ? [] : ['--user', '--map-root-user']), '--net', '--mount', '--pid', '--fork', '--kill-child', '--']
    const fds = net.publish.map((_, i) => FIRST_PUBLISHED_FD + i)
    const relay = [...relayUser, process.execPath, builtEntry('machine/net', 'netnsRelay.js'), JSON.stringify(relayConfig(net, socket, fds))]
    const launcher = `${namespaceSetup(netRules(net))}
${relay.map(shellQuoted).join(' ')} 3>&- 4>&- </dev/null &
${fds.map((fd) => `exec ${fd}>&-`).join('; ')}
${script}`
    const effects = net.effectsStore ? { store: net.effectsStore, machine: o.machine } : null
    const host = [process.execPath, builtEntry('machine/net', 'netHost.js'), JSON.stringify({ socket, allow: net.allow, effects }), '--', 'setpriv', '--pdeathsig', 'KILL', '--']
    const qemu = [...(user ? [] : powerless), QEMU_BINARY, ...qemuArgs(launch)]
    const child = spawnWithDisk([...tie, ...host, ...isolate, 'sh', '-c', launcher, 'sh', ...qemu], launch.disk, o, listeners.map(fdOf))
    return { child, pid: await qemuPid(child, launch, o), launch }
  } finally {
    for (const server of listeners) server.close() // the launcher holds them now
  }
}

/** The launcher's descriptors after stdin, stdout, stderr and the disk's two (DISK_FDS). */
const FIRST_PUBLISHED_FD = 5

/** The launcher's first line, as its namespace's root: loopback up, a default route into it, ports below 1024 for anyone, the NAT rules; a failure ends the launch (its words in QEMU's log). */
const namespaceSetup = (rules: string) =>
  `export PATH=/usr/sbin:/sbin:/usr/bin:/bin:$PATH; echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start && ip link set lo up && ip route add default dev lo && printf %s ${shellQuoted(rules)} | iptables-restore || exit 70`

function relayConfig(net: NetPlan, egress: string, fds: number[]) {
  return { egress, allow: net.allow, publish: net.publish.map((p, i) => ({ fd: fds[i]!, guestPort: p.guestPort })) }
}

/** A listener on the host's 127.0.0.1 for each published port. @throws {UsageError} (exit 2) a port this host cannot take */
async function publishedListeners(net: NetPlan): Promise<Server[]> {
  const servers: Server[] = []
  try {
    for (const { hostPort } of net.publish) {
      const server = createServer()
      servers.push(server)
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err) =>
          reject(new UsageError(`--publish: cannot listen on 127.0.0.1:${hostPort} (${(err as NodeJS.ErrnoException).code})`, { option: 'publish', value: hostPort })),
        )
        server.listen(hostPort, '127.0.0.1', resolve)
      })
    }
    return servers
  } catch (err) {
    for (const server of servers) server.close()
    throw err
  }
}

/** A listening server's descriptor, for a child to inherit. */
const fdOf = (server: Server): number => (server as unknown as { _handle: { fd: number } })._handle.fd

/** QEMU's pid, once it runs: the process whose command line is QEMU's with this QMP socket. */
function qemuPid(child: ChildProcess, launch: QemuLaunch, o: Pick<LaunchOptions, 'log' | 'machine'>): Promise<number> {
  return pollUntil(() => {
    const [pid] = qemuProcesses((cmdline) => cmdline.startsWith(QEMU_BINARY) && cmdline.includes(`${launch.sockets.qmp},`))
    if (pid !== undefined) return pid
    if (child.exitCode !== null || child.signalCode !== null) throw qemuFailed(child, launch, o)
    return undefined
  })
}

/** Spawn `argv` with QEMU's log as stdout and stderr, the disk's descriptors at DISK_FDS and `more` after them. */
function spawnWithDisk(argv: string[], disk: string, o: LaunchOptions, more: number[]): ChildProcess {
  const fds: number[] = []
  try {
    for (const [path, flags] of [
      [o.log, 'a'],
      [disk, 'r+'],
      [disk, 'r'],
    ] as const)
      fds.push(openSync(path, flags))
    const [log, readWrite, readOnly] = fds
    // the disk's descriptors land at DISK_FDS, the places after stdin, stdout and stderr
    const env = { ...process.env, FORKPOINT_NET_FDS: String(more.length) }
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', log, log, readWrite, readOnly, ...more], detached: o.detached, env })
    child.on('error', () => undefined) // reported by waitForSocket from the log and the exit
    child.unref() // a caller may end without killing its machines: tied ones die with it, detached ones live on
    return child
  } finally {
    for (const fd of fds) closeSync(fd)
  }
}

/**
 * Wait for QEMU to listen on a socket it was told to. The file appears at bind(), a
 * moment before listen(), and a connect between the two is refused, so what is watched
 * is the kernel's list of QEMU's unix sockets (in its network namespace: QEMU's pid's) for that path
 * with the listening flag. No deadline: QEMU either listens or exits, and an exit is
 * reported with what it wrote to its log.
 */
export async function waitForSocket({ child, pid, launch }: LaunchedQemu, socket: string, o: Pick<LaunchOptions, 'log' | 'machine'>): Promise<void> {
  await pollUntil(() => {
    if (listensOn(pid, socket)) return true
    if (child.exitCode !== null || child.signalCode !== null) throw qemuFailed(child, launch, o)
    return undefined
  })
}

/** `__SO_ACCEPTCON` in /proc/net/unix's Flags column: the socket listens. */
const LISTENING = 0x10000

function listensOn(pid: number | undefined, socket: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/net/unix`, 'utf8')
      .split('\n')
      .some((line) => line.endsWith(` ${socket}`) && (parseInt(line.trim().split(/\s+/)[3] ?? '0', 16) & LISTENING) !== 0)
  } catch {
    return false // not started yet, or gone: the exit check says which
  }
}

/**
 * The error for a QEMU that exited before it could be watched. KVM that fails a guest can
 * end QEMU at any moment of its start, so on KVM an exit QEMU blames on KVM is the
 * watchdog's AcceleratorFailedError, whichever wait saw it.
 */
export function qemuFailed(child: ChildProcess, launch: Pick<QemuLaunch, 'accelerator' | 'console'>, o: Pick<LaunchOptions, 'log' | 'machine'>): Error {
  const stderr = existsSync(o.log) ? readFileSync(o.log, 'utf8').trim().slice(-2000) : ''
  if (/unshare|setpriv|qemu-system-x86_64/.test(stderr) && /No such file|not found/.test(stderr))
    return new MachineUnavailableError(`cannot start QEMU: ${stderr}`, { tool: QEMU_BINARY, hint: 'apt-get install qemu-system-x86 qemu-utils' })
  const stop = stopped({ machine: o.machine, log: o.log, console: launch.console, accelerator: launch.accelerator }, 'exited')
  if (stop instanceof AcceleratorFailedError) return stop
  return new MachineError(`machine ${o.machine}: QEMU exited (${child.exitCode ?? child.signalCode}): ${stderr || 'no message'}`, { machine: o.machine, stderr })
}
