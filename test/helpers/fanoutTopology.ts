import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { tempDir } from './tmp.js'
import { until } from './until.js'

const CLI = resolve(import.meta.dirname, '..', '..', 'bin', 'forkpoint')
/** The LAN's addresses: the hub (redis, the submitter) and, on a second address, the registry. */
export const HUB_IP = '10.88.0.1'
export const REGISTRY_IP = '10.88.0.2'
/**
 * The bridge's own address, fixed: a bridge left to itself takes its lowest port's, so
 * killing a worker whose veth had it would change the hub's address under the other hosts'
 * ARP caches, and they could not reach the hub or the registry until those entries expired.
 */
const BRIDGE_MAC = '02:88:00:00:00:01'

export interface Finished {
  code: number | null
  stdout: string
  stderr: string
}

export interface FanoutWorkerHost {
  name: string
  /** The worker's own address on the LAN. */
  ip: string
  cache: string
  /** The worker process (node), as the host sees it. */
  pid(): number | null
  log(): string
  exited: Promise<number | null>
}

/**
 * A LAN in namespaces, as root or not: a user + network namespace (the hub) holding a
 * bridge, redis-server and docker-registry on their own addresses; each worker a network
 * namespace of its own (a separate host: own interfaces, own address, a veth to the
 * bridge); the submitter runs in the hub. Every process runs as uid 1000 of a nested user
 * namespace, as an ordinary user would (the hub's root is the caller itself).
 */
export class FanoutTopology {
  readonly registry = `oci://${REGISTRY_IP}:5000/fanout`
  readonly queue = `redis://${HUB_IP}:6379`
  readonly dir = tempDir('fanout-lan')
  /** The queue key the LAN's submitters and workers share, as FORKPOINT_QUEUE_KEY. */
  readonly env = { ...process.env, FORKPOINT_QUEUE_KEY: randomBytes(32).toString('hex') }
  readonly workers: FanoutWorkerHost[] = []
  readonly #children: ChildProcess[] = []
  #hub!: ChildProcess

  static async start(): Promise<FanoutTopology> {
    const t = new FanoutTopology()
    await t.#start()
    return t
  }

  async #start(): Promise<void> {
    this.#hub = this.#track(spawn('unshare', ['-r', '-n', 'sleep', 'infinity'], { stdio: 'ignore' }))
    await until(() => readLink(`/proc/${this.#hub.pid}/ns/net`) !== readLink('/proc/self/ns/net'), 'the hub namespace')
    for (const cmd of [
      'ip link set lo up',
      `ip link add br0 address ${BRIDGE_MAC} type bridge`,
      `ip addr add ${HUB_IP}/24 dev br0`,
      `ip addr add ${REGISTRY_IP}/24 dev br0`,
      'ip link set br0 up',
    ])
      this.hubSync(['sh', '-c', cmd])
    this.#track(spawn(...this.#inHub(['redis-server', '--bind', HUB_IP, '--port', '6379', '--save', '', '--appendonly', 'no', '--protected-mode', 'no']), { stdio: 'ignore' }))
    const data = join(this.dir, 'registry')
    mkdirSync(data)
    writeFileSync(
      join(this.dir, 'registry.yml'),
      `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${data}\nhttp:\n  addr: ${REGISTRY_IP}:5000\n  secret: fanout-test\n`,
    )
    this.#track(spawn(...this.#inHub(['docker-registry', 'serve', join(this.dir, 'registry.yml')]), { stdio: 'ignore' }))
    for (const [ip, port] of [
      [HUB_IP, 6379],
      [REGISTRY_IP, 5000],
    ] as const)
      await until(() => this.hubSync(['bash', '-c', `echo > /dev/tcp/${ip}/${port}`], false).code === 0, `${ip}:${port}`)
  }

  /** Start a worker on a host of its own; `blockRegistry`: its host has no route to the registry (it still reaches the queue). */
  async startWorker(name: string, { args = [], blockRegistry = false }: { args?: string[]; blockRegistry?: boolean } = {}): Promise<FanoutWorkerHost> {
    const ip = `10.88.0.${11 + this.workers.length}`
    const cache = join(this.dir, `cache-${name}`)
    const logFile = join(this.dir, `${name}.log`)
    writeFileSync(logFile, '')
    const wait = 'while ! ip addr show eth0 2>/dev/null | grep -q inet; do sleep 0.02; done; exec "$@"'
    const worker = [process.execPath, CLI, 'worker', '--queue', this.queue, '--registry', this.registry, '--insecure', '--cache', cache, '--name', name, ...args]
    const child = this.#track(
      spawn(...this.#inHub(['unshare', '-U', '--map-user=1000', '--map-group=1000', '-n', 'sh', '-c', `${wait}`, 'sh', ...worker]), {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: this.env,
      }),
    )
    child.stderr!.on('data', (d: Buffer) => writeFileSync(logFile, d, { flag: 'a' }))
    const holder = child.pid! // nsenter exec'd unshare, which made the namespaces and forked sh
    const veth = `vw${this.workers.length}`
    // nsenter enters the hub's namespaces, then execs unshare, which makes the worker's: wait for the last
    const own = () => readLink(`/proc/${holder}/ns/net`)
    await until(() => ![readLink('/proc/self/ns/net'), readLink(`/proc/${this.#hub.pid}/ns/net`)].includes(own()), `${name}'s namespace`)
    this.hubSync(['ip', 'link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', String(holder)])
    this.hubSync(['sh', '-c', `ip link set ${veth} master br0 && ip link set ${veth} up`])
    const route = blockRegistry ? ` && ip route add unreachable ${REGISTRY_IP}/32` : ''
    this.hubSync(['nsenter', '-t', String(holder), '-n', 'sh', '-c', `ip link set lo up && ip link set eth0 up && ip addr add ${ip}/24 dev eth0${route}`])
    const host: FanoutWorkerHost = {
      name,
      ip,
      cache,
      pid: () => workerPid(name),
      log: () => readFileSync(logFile, 'utf8'),
      exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    }
    await until(() => host.log().includes('waiting for jobs'), `worker ${name} to start`)
    this.workers.push(host)
    return host
  }

  /** Run a command in the hub as uid 1000 (the submitter's host), to its end. */
  run(args: string[], { cwd }: { cwd: string }): Promise<Finished> {
    return this.spawnInHub(args, { cwd }).done
  }

  /** Start a command in the hub as uid 1000; `lines` hears its stderr line by line. */
  spawnInHub(args: string[], { cwd, lines }: { cwd: string; lines?: (line: string) => void }): { done: Promise<Finished> } {
    const child = this.#track(spawn(...this.#inHub(['unshare', '-U', '--map-user=1000', '--map-group=1000', ...args]), { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: this.env }))
    let stdout = ''
    let stderr = ''
    let partial = ''
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString()
      const parts = (partial + d.toString()).split('\n')
      partial = parts.pop()!
      for (const line of parts) lines?.(line)
    })
    return { done: new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr }))) }
  }

  /** `forkpoint ARGS` in the hub as the submitter. */
  forkpoint(cwd: string, ...args: string[]): Promise<Finished> {
    return this.run([process.execPath, CLI, ...args], { cwd })
  }

  /** redis-cli against the queue's Redis. */
  redis(...args: string[]): string {
    return this.hubSync(['redis-cli', '-h', HUB_IP, '-p', '6379', ...args]).stdout.trim()
  }

  hubSync(args: string[], check = true): Finished {
    const r = spawnSync(...this.#inHub(args), { encoding: 'utf8' })
    if (check && r.status !== 0) throw new Error(`${args.join(' ')} in the hub exited ${r.status}: ${r.stderr}`)
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  }

  async stop(): Promise<void> {
    for (const child of this.#children.reverse()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await Promise.all(this.#children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve())))
  }

  #inHub(args: string[]): [string, string[]] {
    return ['nsenter', ['-t', String(this.#hub.pid), '-U', '-n', '--preserve-credentials', ...args]]
  }

  #track(child: ChildProcess): ChildProcess {
    this.#children.push(child)
    return child
  }
}

function readLink(path: string): string | null {
  try {
    return readlinkSync(path)
  } catch {
    return null
  }
}

/** The worker's node process, found by its command line. */
function workerPid(name: string): number | null {
  const wanted = `\0worker\0`
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let cmdline: string
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
    } catch {
      continue
    }
    if (cmdline.startsWith(`${process.execPath}\0`) && cmdline.includes(wanted) && cmdline.includes(`\0--name\0${name}\0`)) return Number(entry)
  }
  return null
}
