import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll } from 'vitest'

/** One request as the service saw it. */
export interface HeldRequest {
  idempotencyKey: string | undefined
  userAgent: string | undefined
  body: string
}

/**
 * A mail service on 127.0.0.1 that counts what it *applies*: honouring Idempotency-Key, a key
 * it has seen is answered again without being applied; ignoring keys, every request is
 * applied. The `holdNth` request (counting from 1; 0: none) waits for its answer until
 * `release()`: a request in flight for as long as a test needs. `reset()` empties it between cases.
 */
export function useHoldingServer(honourKeys: boolean) {
  const received: HeldRequest[] = []
  const applied = new Map<string, number>()
  const answers = new Map<string, string>()
  let waiting: Array<() => void> = []
  let port = 0
  const state = { holdNth: 0 }
  const answer = (res: ServerResponse, text: string) => {
    res.setHeader('content-type', 'application/json')
    res.end(text)
  }
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
    req.on('end', () => {
      const key = req.headers['idempotency-key'] as string | undefined
      received.push({ idempotencyKey: key, userAgent: req.headers['user-agent'], body })
      const seen = honourKeys && key !== undefined ? answers.get(key) : undefined
      if (seen === undefined) applied.set(body, (applied.get(body) ?? 0) + 1)
      const text = seen ?? JSON.stringify({ id: `msg-${received.length}` })
      if (honourKeys && key !== undefined) answers.set(key, text)
      if (received.length === state.holdNth) waiting.push(() => answer(res, text))
      else answer(res, text)
    })
  })
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return {
    url: (path = '/send') => `http://127.0.0.1:${port}${path}`,
    received,
    applied,
    state,
    release() {
      state.holdNth = 0
      for (const go of waiting) go()
      waiting = []
    },
    reset() {
      this.release()
      received.splice(0)
      applied.clear()
      answers.clear()
    },
  }
}
