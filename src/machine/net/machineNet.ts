import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { loadHttpPolicy } from '../../effects/httpPolicy.js'
import { UsageError } from '../../errors/index.js'
import type { Store } from '../../store/Store.js'

/** A machine's network: `none` (no network device), or `egress`: a NIC whose way out is only what `allow` names. */
export type MachineNetMode = 'none' | 'egress'

/** What `machine start` and `machine fork` take for a network. */
export interface MachineNetOptions {
  /** @default 'none' */
  net?: MachineNetMode
  /**
   * Where the guest may connect (`--net egress` only): `HOST:PORT`, or `HOST` for its ports
   * 80 and 443; a host name is resolved on the host when the machine starts. The host's own
   * loopback is `127.0.0.1:PORT`, which the guest reaches as 10.0.2.2.
   */
  allow?: string[]
  /** `HOST_PORT:GUEST_PORT`: the guest's port served on the host's 127.0.0.1 (`--net egress` only). */
  publish?: string[]
}

/** An address and port the guest may connect to. */
export interface Destination {
  address: string
  port: number
}

export interface Published {
  hostPort: number
  guestPort: number
}

/** A machine's network as it is launched: null for none. */
export interface NetPlan {
  allow: Destination[]
  publish: Published[]
  /** The store whose HTTP effects policy is in force, when it has one: connections go through the effects egress proxy of the machine's outbox. */
  effectsStore?: string | null
}

/** The ports a host name alone opens: the web's. */
const WEB_PORTS = [80, 443]

/** Destinations one machine may have: each is a port on the relay's loopback (`relayPort`). */
const MAX_DESTINATIONS = 256

/**
 * A machine's network from its options: null for `none`; for `egress`, the destinations
 * resolved (IPv4: the guest has no IPv6) and the ports to publish.
 * @throws {UsageError} (exit 2) a malformed or unresolvable option, or `--allow`/`--publish` without `--net egress`
 */
export async function netPlan(o: MachineNetOptions): Promise<NetPlan | null> {
  const mode = o.net ?? 'none'
  if (mode !== 'none' && mode !== 'egress') throw new UsageError(`--net is none or egress, not ${JSON.stringify(mode)}`, { option: 'net', value: String(mode) })
  if (mode === 'none') {
    if (o.allow?.length || o.publish?.length) throw new UsageError('--allow and --publish need --net egress', { option: 'net', value: 'none' })
    return null
  }
  const allow = uniqueDestinations((await Promise.all((o.allow ?? []).map(destinations))).flat())
  if (allow.length > MAX_DESTINATIONS) throw new UsageError(`at most ${MAX_DESTINATIONS} destinations may be allowed`, { option: 'allow', value: allow.length })
  return { allow, publish: published(o.publish ?? []) }
}

/**
 * The plan, with the store when its HTTP effects policy is in force (a malformed policy is
 * refused here, before anything starts: EffectsPolicyError, exit 2).
 */
export async function withEffectsStore(store: Store, net: NetPlan | null): Promise<NetPlan | null> {
  return net && { ...net, effectsStore: (await loadHttpPolicy(store)) ? store.root : null }
}

/** The network device of a machine with this network: one whose way out is open, or none. */
export const nicOf = (net: NetPlan | null) => (net ? { open: true, guestPorts: net.publish.map((p) => p.guestPort) } : null)

/** The built entry of a machine network's host side (`netHost.ts`), which its command line names. */
export const NET_HOST_ENTRY = 'machine/net/netHost.js'

/**
 * The effects context of a machine under the workspace's HTTP effects policy: an outbox
 * of its own, as a branch has (docs/machine.md, "Network").
 */
export const machineOutbox = (machine: string) => ({ kind: 'branch' as const, id: `machine-${machine}`, name: `machine ${machine}` })

/** The loopback port of the machine's network namespace where connections to `allow[index]` land. */
export const relayPort = (index: number) => 1 + index

/** The address in QEMU's network namespace where its user-mode network serves a published guest port. */
export const PUBLISH_ADDRESS = '127.0.0.2'

async function destinations(spec: string): Promise<Destination[]> {
  const match = /^([^:\s]+)(?::(\d+))?$/.exec(spec)
  const bad = (why: string) => new UsageError(`--allow ${JSON.stringify(spec)}: ${why}`, { option: 'allow', value: spec })
  if (!match) throw bad('not HOST or HOST:PORT (an IPv6 address is not allowed: the guest has no IPv6)')
  const ports = match[2] === undefined ? WEB_PORTS : [port(match[2], bad)]
  const addresses = await addressesOf(match[1]!, bad)
  return addresses.flatMap((address) => ports.map((p) => ({ address, port: p })))
}

async function addressesOf(host: string, bad: (why: string) => UsageError): Promise<string[]> {
  if (isIP(host) === 4) return [host]
  if (isIP(host) === 6) throw bad('the guest has no IPv6')
  try {
    return (await lookup(host, { all: true, family: 4 })).map((a) => a.address)
  } catch (err) {
    throw bad(`cannot resolve it here (${(err as Error).message})`)
  }
}

function port(text: string, bad: (why: string) => UsageError): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw bad(`${text} is not a port (1-65535)`)
  return n
}

function uniqueDestinations(all: Destination[]): Destination[] {
  const seen = new Set<string>()
  return all.filter((d) => !seen.has(`${d.address}:${d.port}`) && seen.add(`${d.address}:${d.port}`))
}

function published(specs: string[]): Published[] {
  const all = specs.map((spec) => {
    const bad = (why: string) => new UsageError(`--publish ${JSON.stringify(spec)}: ${why}`, { option: 'publish', value: spec })
    const match = /^(\d+):(\d+)$/.exec(spec)
    if (!match) throw bad('not HOST_PORT:GUEST_PORT')
    return { hostPort: port(match[1]!, bad), guestPort: port(match[2]!, bad) }
  })
  for (const key of ['hostPort', 'guestPort'] as const) {
    const twice = all.find((p, i) => all.findIndex((q) => q[key] === p[key]) !== i)
    if (twice) throw new UsageError(`--publish: ${key === 'hostPort' ? 'host' : 'guest'} port ${twice[key]} is published twice`, { option: 'publish', value: twice[key] })
  }
  return all
}

/**
 * The NAT rules of a machine's namespace: a TCP connection to an allowed destination goes
 * to the relay's port for it (the host's loopback too: QEMU's user-mode network connects
 * to 127.0.0.1 for the guest's 10.0.2.2); anything else leaving loopback is refused.
 */
export function netRules(net: NetPlan): string {
  const redirects = net.allow.map((d, i) => `-A OUTPUT -p tcp -d ${d.address}/32 --dport ${d.port} -j REDIRECT --to-ports ${relayPort(i)}\n`).join('')
  return `*nat\n:OUTPUT ACCEPT [0:0]\n${redirects}COMMIT\n*filter\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT ! -d 127.0.0.0/8 -p tcp -j REJECT --reject-with tcp-reset\n-A OUTPUT ! -d 127.0.0.0/8 -j REJECT\nCOMMIT\n`
}
