import { createServer } from 'node:net'
import { afterAll, beforeAll } from 'vitest'

/**
 * A TCP server on the host's 127.0.0.1 that answers "hello", for the current describe
 * block (or file): the port to reach it, once it listens.
 */
export function useHelloServer(): () => number {
  let port = 0
  const server = createServer((s) => s.on('error', () => undefined).end('hello'))
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    port = (server.address() as { port: number }).port
  })
  afterAll(() => new Promise((r) => server.close(r)))
  return () => port
}
