import { type Socket, connect, createServer } from 'node:net'
import { type Destination, PUBLISH_ADDRESS, relayPort } from './machineNet.js'

/**
 * `node netnsRelay.js CONFIG`, run inside a machine's network namespace by its launcher
 * (launchQemu.ts), as QEMU's user, before QEMU: the namespace's NAT rules turn each
 * connection QEMU's user-mode network makes for the guest to an allowed destination into
 * a connection to this relay's loopback port for it, which is handed to the host side's
 * unix socket (`netHost.ts`) after the line `forkpoint-egress ADDRESS PORT` (the effects
 * egress proxy's own protocol). And each connection to a published port, whose listening
 * socket on the host's 127.0.0.1 the launcher inherited (descriptor `fd`), goes to the
 * guest's port through QEMU's forward of it on PUBLISH_ADDRESS. It dies with the
 * namespace's PID 1.
 */
interface RelayConfig {
  egress: string
  allow: Destination[]
  publish: Array<{ fd: number; guestPort: number }>
}

const config = JSON.parse(process.argv[2] ?? '{}') as RelayConfig

const pipeBoth = (a: Socket, b: Socket) => {
  a.on('error', () => b.destroy())
  b.on('error', () => a.destroy())
  a.pipe(b).pipe(a)
}

config.allow.forEach((destination, index) => {
  createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ path: config.egress, allowHalfOpen: true })
    upstream.write(`forkpoint-egress ${destination.address} ${destination.port}\n`)
    pipeBoth(client, upstream)
  }).listen(relayPort(index), '127.0.0.1')
})

for (const { fd, guestPort } of config.publish)
  createServer({ allowHalfOpen: true }, (client) => pipeBoth(client, connect({ port: guestPort, host: PUBLISH_ADDRESS, allowHalfOpen: true }))).listen({ fd })
