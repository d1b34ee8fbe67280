import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RegistryAuthError, pullImage, pushImage } from '../../src/index.js'
import { sharedRegistry, type SharedRegistry } from '../helpers/sharedServices.js'
import { emptyStore, makeImage } from './fixtures.js'

/**
 * A front for the real registry that speaks the parts docker-registry's own config
 * cannot show here: bearer tokens from a token service, and 307 redirects of blob
 * downloads to another origin (as registries backed by object storage do). The client
 * talks to `localhost:PORT`; redirects go to `127.0.0.1:PORT/direct/…`, another origin,
 * where we record whether credentials followed.
 */
let registry: SharedRegistry
let front: ReturnType<typeof createServer>
let port = 0
const seen = { tokens: 0, redirects: 0, directWithAuth: 0, directRequests: 0 }
const TOKEN = 'token-for-alice'

async function body(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const chunk of req) parts.push(chunk as Buffer)
  return Buffer.concat(parts)
}

async function forward(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'authorization', 'connection'].includes(k)) headers[k] = v
  const bytes = await body(req)
  const init: RequestInit = { method: req.method!, headers, redirect: 'manual' }
  if (bytes.length > 0 || req.method === 'PUT' || req.method === 'PATCH') init.body = bytes
  const upstream = await fetch(`http://${registry.host}${path}`, init)
  const out: Record<string, string> = {}
  upstream.headers.forEach((v, k) => {
    if (!['content-length', 'transfer-encoding', 'connection'].includes(k)) out[k] = k === 'location' ? v.replace(`http://${registry.host}`, `http://localhost:${port}`) : v
  })
  const payload = Buffer.from(await upstream.arrayBuffer())
  if (req.method !== 'HEAD') out['content-length'] = String(payload.length)
  else if (upstream.headers.get('content-length')) out['content-length'] = upstream.headers.get('content-length')!
  res.writeHead(upstream.status, out)
  res.end(req.method === 'HEAD' ? undefined : payload)
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url!, `http://${req.headers.host}`)
  if (url.pathname === '/token') {
    seen.tokens++
    const ok = req.headers.authorization === `Basic ${Buffer.from('alice:pw').toString('base64')}`
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
    return void res.end(ok ? JSON.stringify({ token: TOKEN }) : '{}')
  }
  if (url.pathname.startsWith('/direct/')) {
    seen.directRequests++
    if (req.headers.authorization) seen.directWithAuth++
    return forward(req, res, url.pathname.slice('/direct'.length) + url.search)
  }
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    await body(req)
    res.writeHead(401, { 'www-authenticate': `Bearer realm="http://127.0.0.1:${port}/token",service="front"`, 'content-type': 'application/json' })
    return void res.end('{"errors":[{"code":"UNAUTHORIZED"}]}')
  }
  if (req.method === 'GET' && /\/blobs\/sha256:/.test(url.pathname)) {
    seen.redirects++
    res.writeHead(307, { location: `http://127.0.0.1:${port}/direct${url.pathname}` })
    return void res.end()
  }
  return forward(req, res, url.pathname + url.search)
}

beforeAll(async () => {
  registry = sharedRegistry()
  front = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      res.writeHead(500)
      res.end(err.message)
    })
  })
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve))
  port = (front.address() as AddressInfo).port
})
afterAll(async () => {
  await new Promise((resolve) => front?.close(resolve))
})

describe('OCI client protocol', () => {
  it('gets a bearer token with the credentials and follows 307 redirects without sending them along', async () => {
    const image = await makeImage({ 'a.txt': 'behind a token service', 'b/c.txt': 'redirected download' })
    const remote = `oci://localhost:${port}/team/agent:v1`
    const credentials = { username: 'alice', password: 'pw' }
    const pushed = await pushImage({ store: image.store, id: image.id, remote, credentials })
    expect(pushed.sentObjects).toBe(pushed.objects)
    const pulled = await pullImage({ store: await emptyStore(), remote, credentials })
    expect(pulled.id).toBe(image.id)
    expect(seen.tokens).toBeGreaterThan(0)
    expect(seen.redirects).toBeGreaterThanOrEqual(2) // the pack's index and (a range of) the pack
    expect(seen.directRequests).toBe(seen.redirects)
    expect(seen.directWithAuth).toBe(0)
  })

  it('reports a refused token request clearly', async () => {
    const image = await makeImage({ 'a.txt': 'x' })
    const error = await pushImage({
      store: image.store,
      id: image.id,
      remote: `oci://localhost:${port}/team/other:v1`,
      credentials: { username: 'alice', password: 'wrong' },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RegistryAuthError)
    expect((error as Error).message).toContain('refused user alice')
  })
})
