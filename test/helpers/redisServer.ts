import { spawn } from 'node:child_process'
import { connect } from 'node:net'
import { until } from './until.js'
import { freePort } from './registryServer.js'
import type { TestCa } from './tlsRegistry.js'

export interface RedisServer {
  /** `redis://127.0.0.1:PORT` (`rediss://` with `tls`) */
  queue: string
  port: number
  stop(): void
}

export interface RedisSettings {
  maxClients?: number
  /** ACL users, each as `user` lines of redis.conf take it: `['alice', 'on', '>secret', '~*', '&*', '+@all']`. */
  users?: string[][]
  /** Serve TLS only, with this CA's server certificate (clients need no certificate). */
  tls?: TestCa
}

/** A redis-server on 127.0.0.1 at a free port, keeping nothing on disk, accepting connections once this resolves. */
export async function startRedis({ maxClients, users = [], tls }: RedisSettings = {}): Promise<RedisServer> {
  const port = await freePort()
  const limit = maxClients === undefined ? [] : ['--maxclients', String(maxClients)]
  const acl = users.flatMap((user) => ['--user', ...user])
  const listen = tls
    ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile, '--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', 'no']
    : ['--port', String(port)]
  const child = spawn('redis-server', ['--bind', '127.0.0.1', ...listen, '--save', '', '--appendonly', 'no', ...limit, ...acl], { stdio: 'ignore' })
  await until(() => accepts(port), `redis-server on port ${port} to accept connections`)
  return { queue: `${tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`, port, stop: () => child.kill() }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
