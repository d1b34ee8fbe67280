import { type Server, createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RegistryRequestError, pullImage, pushImage } from '../../src/index.js'
import { redactSecrets } from '../../src/registry/transport/redactSecrets.js'
import { fp } from '../helpers/cli.js'
import { type RegistryServer, startRegistry } from '../helpers/registryServer.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { emptyStore, makeImage } from './fixtures.js'

const user = { username: 'alice', password: 'pw-Kx81-canary' }
const basic = Buffer.from(`${user.username}:${user.password}`).toString('base64')
let registry: RegistryServer
let echoing: Server
let echoHost: string

/**
 * In front of the real registry: requests without credentials go through (so the
 * registry's own 401 challenge comes back); any request that carries them gets a 500
 * whose body echoes them, as a broken proxy did.
 */
function startEchoingProxy(upstream: string): Promise<{ server: Server; host: string }> {
  const server = createServer((req, res) => {
    const authorization = req.headers['authorization']
    if (authorization) {
      res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(`upstream failed for request with Authorization: ${authorization}\npassword=${user.password} token ${basic}\n${'x'.repeat(20_000)}`)
      return
    }
    void fetch(`http://${upstream}${req.url}`, { method: req.method }).then(async (r) => {
      res.writeHead(r.status, Object.fromEntries(r.headers))
      res.end(Buffer.from(await r.arrayBuffer()))
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, host: `127.0.0.1:${(server.address() as { port: number }).port}` })))
}

beforeAll(async () => {
  registry = await startRegistry({ dir: tempDir('registry-auth'), auth: user })
  ;({ server: echoing, host: echoHost } = await startEchoingProxy(registry.host))
})
afterAll(async () => {
  await registry?.stop()
  await new Promise((r) => echoing?.close(r))
})

const expectNoCredentials = (text: string) => {
  expect(text).not.toContain(user.password)
  expect(text).not.toContain(basic)
}

describe('credentials are never printed', () => {
  it('accepts user:password in an oci:// remote as credentials', async () => {
    const image = await makeImage({ 'a.txt': 'private' })
    const remote = `oci://${user.username}:${user.password}@${registry.host}/private/agent:v1`
    const pushed = await pushImage({ store: image.store, id: image.id, remote })
    expect(pushed.remote).toBe(`oci://${registry.host}/private/agent`)
    expect((await pullImage({ store: await emptyStore(), remote })).id).toBe(image.id)
  })

  it('redacts a 5xx body that echoes the credentials, and cuts it short', async () => {
    const error = (await pullImage({ store: await emptyStore(), remote: `oci://${echoHost}/private/agent:v1`, credentials: user }).then(
      () => null,
      (e: unknown) => e,
    )) as Error
    expect(error).toBeInstanceOf(RegistryRequestError)
    expect(error.message).toContain('HTTP 500')
    expect(error.message).toContain('Authorization: [redacted]')
    expectNoCredentials(error.message)
    expectNoCredentials(JSON.stringify(error))
    expect(error.message.length).toBeLessThan(400)
  })

  it('forkpoint push and pull never print the password of a remote, whatever fails', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'one' })
    expect((await fp(dir, 'init')).code).toBe(0)
    expect((await fp(dir, 'snapshot', '-m', 'one')).code).toBe(0)
    const secret = `${user.username}:${user.password}`
    for (const args of [
      ['push', 'HEAD', `oci://${secret}@127.0.0.1:1/x/y`],
      ['pull', `oci://${secret}@127.0.0.1:1/x/y:v1`],
      ['push', 'HEAD', `oci://${secret}@/x`],
      ['push', 'HEAD', `oci://${secret}@${registry.host}/Bad/Name`],
      ['pull', `oci://${secret}@${echoHost}/private/agent:v1`],
      ['pull', `oci://${secret}@${echoHost}/private/agent:v1`, '--json'],
    ]) {
      const r = await fp(dir, ...args)
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expectNoCredentials(r.stdout + r.stderr)
    }
  })

  it('redactSecrets strips userinfo, auth schemes, secret fields and known values', () => {
    const text = 'see https://bob:hunter22@example.com/x Bearer abc.def-ghi {"password":"p4ss","token": "t0k"} api sk-known-1234'
    const out = redactSecrets(text, ['sk-known-1234'])
    for (const leaked of ['hunter22', 'abc.def-ghi', 'p4ss', 't0k', 'sk-known-1234']) expect(out).not.toContain(leaked)
    expect(out).toContain('https://example.com/x')
  })
})
