import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, expect } from 'vitest'
import { fpInProcess } from './cli.js'
import { makeWorkspace } from './tmp.js'

/** What a counting service received: one entry per request. */
export interface Received {
  method: string
  path: string
  idempotencyKey: string | undefined
  body: string
}

/**
 * A real HTTP service on the host's 127.0.0.1 for the current file: it counts every request
 * (method, path, Idempotency-Key header, body) and answers `{"id": "msg-N"}`. `received` is
 * emptied before each test.
 */
export function useCountingServer(): { url: (path?: string) => string; port: () => number; received: Received[] } {
  const received: Received[] = []
  let port = 0
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', idempotencyKey: req.headers['idempotency-key'] as string | undefined, body })
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ id: `msg-${received.length}` }))
    })
  })
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
  beforeEach(() => void received.splice(0))
  return { url: (path = '/send') => `http://127.0.0.1:${port}${path}`, port: () => port, received }
}

/** A workspace with a store and an HTTP effects policy that makes POST /send (the counting service's "email") irreversible. */
export async function workspaceDeferringSend(): Promise<string> {
  const dir = await makeWorkspace({ 'notes.txt': 'hello\n' })
  expect((await fpInProcess(dir, 'init')).code).toBe(0)
  writeFileSync(join(dir, '.forkpoint', 'effects.json'), JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
  return dir
}
