import { spawn } from 'node:child_process'
import { chmodSync } from 'node:fs'
import { type Socket, connect, createServer, isIP } from 'node:net'
import { withEgressEffects } from '../../effects/withHttpEffects.js'
import type { EgressProxy } from '../../sandbox/runSandboxed.js'
import { Store } from '../../store/Store.js'
import { type Destination, machineOutbox } from './machineNet.js'

/**
 * `node netHost.js CONFIG -- CMD…`: the host side of a machine's network, on the host's
 * network, which starts the machine's launcher (CMD, passing on its descriptors) and ends
 * with it. It serves the unix socket the relay in the machine's namespace hands each
 * connection to (`netnsRelay.ts`), and connects only where the machine was allowed to:
 * a header naming anything else ends the connection, for the relay runs as QEMU's user,
 * whom a hostile guest may have taken over. Under the store's HTTP effects policy
 * (`effects`), an allowed connection goes to the effects egress proxy of the machine's
 * outbox, as a sandbox's would, not to its destination: the proxy classes each request
 * and defers the irreversible ones until the machine is committed.
 */
interface HostConfig {
  socket: string
  allow: Destination[]
  effects: { store: string; machine: string } | null
}

const HEADER = /^forkpoint-egress (\S+) (\d{1,5})\n/
const HEADER_MAX = 64

const separator = process.argv.indexOf('--')
const config = JSON.parse(process.argv[2] ?? '{}') as HostConfig
const command = process.argv.slice(separator + 1)
const allowed = new Set(config.allow.map((d) => `${d.address}:${d.port}`))

/** The header, once whole, and what came after it. */
function takeHeader(client: Socket, then: (destination: Destination, rest: Buffer) => void): void {
  let seen = Buffer.alloc(0)
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk])
    const end = seen.indexOf(0x0a)
    if (end < 0 && seen.length < HEADER_MAX) return
    client.off('data', onData)
    client.pause()
    const match = HEADER.exec(seen.toString('latin1', 0, end + 1))
    if (!match || isIP(match[1]!) !== 4) return void client.destroy()
    then({ address: match[1]!, port: Number(match[2]) }, seen.subarray(end + 1))
  }
  client.on('data', onData)
}

/** Where an allowed connection goes: its destination, or the effects egress proxy's socket after its relay's header (with the run's token). */
type Upstream = (destination: Destination) => Socket

const direct: Upstream = (d) => connect({ port: d.port, host: d.address, allowHalfOpen: true })

const throughProxy =
  ({ socket, token }: EgressProxy): Upstream =>
  (d) => {
    const upstream = connect({ path: socket, allowHalfOpen: true })
    upstream.write(`forkpoint-egress ${token} ${d.address} ${d.port}\n`)
    return upstream
  }

function relay(upstreamFor: Upstream): (client: Socket) => void {
  return (client) => {
    client.on('error', () => undefined)
    takeHeader(client, (destination, rest) => {
      if (!allowed.has(`${destination.address}:${destination.port}`)) return void client.destroy()
      const upstream = upstreamFor(destination)
      upstream.on('error', () => client.destroy())
      client.on('error', () => upstream.destroy())
      upstream.write(rest)
      client.pipe(upstream).pipe(client)
      client.resume()
    })
  }
}

/** Serve the relay's socket and run the launcher; resolves with its exit status once it has exited. */
function serveWhileRunning(upstreamFor: Upstream): Promise<number> {
  const server = createServer({ allowHalfOpen: true }, relay(upstreamFor))
  return new Promise((resolve) => {
    server.listen(config.socket, () => {
      chmodSync(config.socket, 0o777) // its folder (0700, QEMU's user's) is what keeps others out
      const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 1, 2, 3, 4, ...inheritedBeyond(4)] })
      child.on('error', (err) => {
        process.stderr.write(`forkpoint: cannot start ${command[0]}: ${err.message}\n`)
        resolve(127)
      })
      child.on('exit', (code, signal) => {
        server.close()
        resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15))
      })
    })
  })
}

async function main(): Promise<number> {
  if (!config.effects) return serveWhileRunning(direct)
  const store = await Store.open(config.effects.store)
  return withEgressEffects({ store, context: machineOutbox(config.effects.machine), env: process.env }, (net) => serveWhileRunning(net ? throughProxy(net) : direct))
}

main().then(
  (status) => process.exit(status),
  (err: unknown) => {
    process.stderr.write(`forkpoint: the machine's network failed: ${(err as Error).message}\n`)
    process.exit(70)
  },
)

/** The descriptors after `last` this process was given (a machine's published listeners): its launcher takes them too. */
function inheritedBeyond(last: number): number[] {
  const count = Number(process.env['FORKPOINT_NET_FDS'] ?? '0')
  return Array.from({ length: count }, (_, i) => last + 1 + i)
}
