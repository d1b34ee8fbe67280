import { spawn, spawnSync } from 'node:child_process'
import { until } from './until.js'
import { freePort } from './registryServer.js'

export interface RedisServer {
  /** `redis://127.0.0.1:PORT` */
  queue: string
  port: number
  stop(): void
}

/** A redis-server on 127.0.0.1 at a free port, keeping nothing on disk, answering PING once this resolves. */
export async function startRedis({ maxClients }: { maxClients?: number } = {}): Promise<RedisServer> {
  const port = await freePort()
  const limit = maxClients === undefined ? [] : ['--maxclients', String(maxClients)]
  const child = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', ...limit], { stdio: 'ignore' })
  await until(() => spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG', `redis-server on port ${port} to answer`)
  return { queue: `redis://127.0.0.1:${port}`, port, stop: () => child.kill() }
}
