// Adversary 4 of THREAT-MODEL.md: web pages in the user's browser.
import { spawn, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { describe, expect, it } from 'vitest'
import type { Digest } from '../../src/objects/digest.js'
import { type RunningService, startService } from '../../src/service/httpService.js'
import { createMcpServer } from '../../src/service/mcpServer.js'
import { checkout, snapshotWorkspace } from '../../src/index.js'
import { noteRunningSandbox } from '../../src/branch/run/runningSandboxes.js'
import { readRef, updateRef } from '../../src/store/refs.js'
import type { Store } from '../../src/store/Store.js'
import { CLI, LIB } from '../helpers/cli.js'
import { runUntilCrash } from '../helpers/crasher.js'
import { useServices } from '../helpers/serviceCleanup.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/until.js'
import { dirState, storeWorkspace } from '../helpers/workspace.js'

/** An MCP client connected to a server for `dir`, in this process. */
async function mcpClient(dir: string, allowRemotes: string[] = []): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await createMcpServer({ dir }, { allowRemotes }).connect(serverSide)
  const client = new Client({ name: 'test', version: '1' })
  await client.connect(clientSide)
  return client
}

/** One MCP tool call on a server for `dir`; its result as JSON text. */
async function mcpCall(dir: string, name: string, args: Record<string, unknown>, allowRemotes: string[] = []): Promise<string> {
  const client = await mcpClient(dir, allowRemotes)
  const result = await client.callTool({ name, arguments: args })
  await client.close()
  return JSON.stringify(result)
}

/** A POST to the service with its token, as a client that holds it. */
function authorizedPost(service: RunningService, name: string, body: unknown): Promise<Response> {
  return fetch(`${service.address}/v1/${name}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

/** A workspace with one snapshot and a service of it on loopback (ended by `services`). */
async function servedWorkspace(services: RunningService[], env?: NodeJS.ProcessEnv): Promise<{ dir: string; service: RunningService }> {
  const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
  expect(spawnSync(CLI, ['snapshot', '-m', 'one'], { cwd: dir }).status).toBe(0)
  const service = await startService({ dir, listen: '127.0.0.1:0', watch: false, ...(env ? { env } : {}) })
  services.push(service)
  return { dir, service }
}

describe('listeners are safe by default', () => {
  const { services, children } = useServices()

  /** One request as a page (or a rebinding name) could make it; `target` is `http://HOST:PORT`. */
  function send(target: string, path: string, { body = '', headers = {} }: { body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string }> {
    const url = new URL(target)
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: Number(url.port), method: 'POST', path, headers }, (res) => {
        let text = ''
        res.on('data', (d: Buffer) => (text += d.toString()))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  /** `forkpoint serve --listen 127.0.0.1:0` in a workspace of the user's own, as root or as nobody; its address once it serves. */
  async function cliService(asNobody: boolean): Promise<{ dir: string; address: string; token: string }> {
    const dir = tempDir('web-pages-ws')
    const prefix = asNobody ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'] : []
    if (asNobody) chownSync(dir, 65534, 65534)
    const env = { PATH: process.env['PATH']!, HOME: dir, NO_COLOR: '1' }
    expect(spawnSync(prefix[0] ?? CLI, [...prefix.slice(1), ...(asNobody ? [CLI] : []), 'init'], { cwd: dir, env }).status).toBe(0)
    const [cmd, ...args] = [...prefix, CLI, 'serve', '--listen', '127.0.0.1:0', '--no-watch', '--json']
    const child = spawn(cmd, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
    children.push(child)
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    await until(() => out.includes('\n') || child.exitCode !== null, 'the service to start')
    const { address } = JSON.parse(out) as { address: string }
    return { dir, address, token: tokenIn(dir) }
  }

  /** The store's service token, or '' where none is written. */
  const tokenIn = (dir: string): string => (existsSync(join(dir, '.forkpoint', 'service-token')) ? readFileSync(join(dir, '.forkpoint', 'service-token'), 'utf8').trim() : '')

  for (const asNobody of [false, true]) {
    it(`refuses what a page can send to a loopback service started by ${asNobody ? 'nobody' : 'root'}: no token, a text/plain body, a foreign Origin, a rebinding Host`, async () => {
      const { dir, address, token } = await cliService(asNobody)
      const run = (marker: string) => JSON.stringify({ command: ['touch', marker] })
      const auth = { authorization: `Bearer ${token}` }
      const json = { 'content-type': 'application/json' }
      const host = new URL(address).host
      const simplePost = await send(address, '/v1/run', { body: run('simple'), headers: { 'content-type': 'text/plain' } })
      const noToken = await send(address, '/v1/run', { body: run('no-token'), headers: json })
      const textPlain = await send(address, '/v1/run', { body: run('text-plain'), headers: { ...auth, 'content-type': 'text/plain;charset=UTF-8' } })
      const foreignOrigin = await send(address, '/v1/run', { body: run('origin'), headers: { ...auth, ...json, origin: 'http://attacker.example' } })
      const rebound = await send(address, '/v1/run', { body: run('rebound'), headers: { ...auth, ...json, host: `attacker.example:${new URL(address).port}` } })
      expect([simplePost.status, noToken.status, textPlain.status, foreignOrigin.status, rebound.status]).toEqual([401, 401, 415, 403, 421])
      for (const marker of ['simple', 'no-token', 'text-plain', 'origin', 'rebound']) expect(existsSync(join(dir, marker)), marker).toBe(false)
      // the listener's own names, with its token and a JSON body, are served
      const own = await send(address, '/v1/status', { body: '{}', headers: { ...auth, ...json, host, origin: `http://${host}` } })
      expect(own.status).toBe(200)
    }, 120_000)
  }

  it('confines the files a request names to the workspace, and never echoes a file it read', async () => {
    const { dir } = await storeWorkspace({ 'notes.md': 'v1\n', 'leak.run.json': 'workspace-secret: not json\n' })
    const outside = tempDir('web-pages-outside')
    writeFileSync(join(outside, 'shadow'), 'root:$6$outside-secret:19000:0:99999:7:::\n')
    writeFileSync(join(outside, 'shadow.run.json'), 'root:$6$outside-secret:19000:0:99999:7:::\n')
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    const headers = { authorization: `Bearer ${tokenIn(dir)}`, 'content-type': 'application/json' }
    const post = (op: string, args: object) => send(service.address, `/v1/${op}`, { body: JSON.stringify(args), headers })
    const refused = [
      await post('replay', { run: join(outside, 'shadow') }),
      await post('diff', { a: '../../../../..' + join(outside, 'shadow.run.json'), b: 'latest' }),
      await post('replay', { run: '.forkpoint/service-token' }),
    ]
    for (const answer of refused) {
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'RequestRefusedError' } })
      expect(answer.body).not.toContain('outside-secret')
    }
    const inside = await post('replay', { run: 'leak.run.json' })
    expect(JSON.parse(inside.body)).toMatchObject({ error: { code: 'RunArtifactError' } })
    expect(inside.body).not.toContain('workspace-secret')
  })

  it('pushes and pulls over HTTP only to file:// remotes inside the workspace or an allowed directory, and to the remotes it was started to allow', async () => {
    const { dir } = await storeWorkspace({ 'notes.md': 'v1\n' })
    const allowed = tempDir('web-pages-allowed')
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false, allowPaths: [allowed], allowRemotes: ['oci://127.0.0.1:1/team'] })
    services.push(service)
    const headers = { authorization: `Bearer ${tokenIn(dir)}`, 'content-type': 'application/json' }
    const post = async (op: string, args: object) => JSON.parse((await send(service.address, `/v1/${op}`, { body: JSON.stringify(args), headers })).body) as Record<string, unknown>
    const id = (await post('snapshot', {}))['id'] as string
    const elsewhere = tempDir('web-pages-elsewhere')
    const code = (r: Record<string, unknown>) => (r['error'] as { code: string } | undefined)?.code ?? 'ok'
    expect(code(await post('push', { id, remote: `file://${elsewhere}/layout:v1` }))).toBe('RequestRefusedError')
    expect(code(await post('push', { id, remote: 'oci://attacker.example/loot:v1' }))).toBe('RequestRefusedError')
    expect(code(await post('push', { id, remote: 'oci://127.0.0.1:1/teammate-not:v1' }))).toBe('RequestRefusedError')
    expect(code(await post('pull', { remote: `file://${elsewhere}/layout:v1` }))).toBe('RequestRefusedError')
    expect(existsSync(join(elsewhere, 'layout'))).toBe(false)
    expect(code(await post('push', { id, remote: `file://${allowed}/layout:v1` }))).toBe('ok')
    mkdirSync(join(dir, 'exports'))
    expect(code(await post('push', { id, remote: `file://${join(dir, 'exports')}/layout:v1` }))).toBe('ok')
    // allowed, so it goes to the registry (which is not there): refused by the network, not by the policy
    expect(code(await post('push', { id, remote: 'oci://127.0.0.1:1/team/agent:v1' }))).toBe('RegistryRequestError')
  })

  it('confines the files an MCP call names too, unless the server allows their directory', async () => {
    const { dir } = await storeWorkspace({})
    const outside = tempDir('web-pages-mcp')
    writeFileSync(join(outside, 'x.run.json'), 'mcp-secret\n')
    const call = async (allowPaths: string[]) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
      await createMcpServer({ dir }, { allowPaths }).connect(serverSide)
      const client = new Client({ name: 'test', version: '1' })
      await client.connect(clientSide)
      const result = await client.callTool({ name: 'replay', arguments: { run: join(outside, 'x.run.json') } })
      await client.close()
      return JSON.stringify(result)
    }
    const refused = await call([])
    expect(refused).toContain('RequestRefusedError')
    const allowed = await call([outside])
    expect(allowed).toContain('RunArtifactError')
    expect(refused + allowed).not.toContain('mcp-secret')
  })
})

describe("the operation table's fields of the caller's own machine", () => {
  const { services } = useServices()

  it('are refused over HTTP and MCP: a checkout writes nowhere but the workspace, nor takes git files that run code', async () => {
    const { dir, service } = await servedWorkspace(services)
    const into = join(tempDir('table-local'), 'out')
    for (const field of [{ into }, { trustGit: true }, { allowExternalSymlinks: true }]) {
      const res = await authorizedPost(service, 'checkout', { id: 'HEAD', ...field })
      expect(res.status).toBe(400)
      expect(await mcpCall(dir, 'checkout', { id: 'HEAD', ...field })).toMatch(/"isError":true/)
    }
    expect(existsSync(into)).toBe(false)
  })

  it('MCP push and pull reach only the remotes and directories the server allows', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    expect(spawnSync(CLI, ['snapshot', '-m', 'one'], { cwd: dir }).status).toBe(0)
    const elsewhere = tempDir('table-elsewhere')
    expect(await mcpCall(dir, 'push', { id: 'HEAD', remote: `file://${elsewhere}/layout:v1` })).toContain('RequestRefusedError')
    expect(existsSync(join(elsewhere, 'layout'))).toBe(false)
    expect(await mcpCall(dir, 'push', { id: 'HEAD', remote: 'oci://127.0.0.1:1/team/agent:v1' })).toContain('RequestRefusedError')
    // allowed, so it goes to the registry (which is not there): refused by the network, not by the policy
    expect(await mcpCall(dir, 'push', { id: 'HEAD', remote: 'oci://127.0.0.1:1/team/agent:v1' }, ['oci://127.0.0.1:1/team'])).toContain('RegistryRequestError')
    expect(await mcpCall(dir, 'pull', { remote: `file://${elsewhere}/layout:v1` })).toContain('RequestRefusedError')
  })
})

describe('run files a request names, however it names them', () => {
  const { services } = useServices()
  const SECRET = 'PRIVATE-OUTSIDE-THE-WORKSPACE'
  /** A run artifact whose only step's answer is `text`. */
  const artifact = (runId: string, text: string, parent?: string) =>
    JSON.stringify({
      kind: 'run',
      schemaVersion: 1,
      runId,
      entrypoint: 'agent',
      startedAt: '2026-01-01T00:00:00Z',
      endedAt: '2026-01-01T00:00:01Z',
      status: 'ok',
      redaction: 'secrets',
      meta: {},
      ...(parent ? { parent } : {}),
      steps: [{ idx: 0, name: 'llm', type: 'llm', input: { prompt: 'hi' }, output: { text }, startedAt: '2026-01-01T00:00:00Z', durationMs: 1 }],
    })

  /** A workspace holding what a sandboxed command (or a cloned repository) may leave: links named as runs, to a secret run outside. */
  async function plantedWorkspace(): Promise<string> {
    const { dir } = await storeWorkspace({})
    const outside = tempDir('run-files-outside')
    writeFileSync(join(outside, 'secret.run.json'), artifact('run-000000000001aaaaaaaa', SECRET))
    symlinkSync(join(outside, 'secret.run.json'), join(dir, 'run-000000000001aaaaaaaa'))
    writeFileSync(join(dir, 'run-000000000002bbbbbbbb'), artifact('run-000000000002bbbbbbbb', 'public'))
    writeFileSync(join(dir, 'mine.run.json'), artifact('run-000000000003cccccccc', 'public', 'run-000000000001aaaaaaaa'))
    mkdirSync(join(dir, 'sub'))
    symlinkSync(join(outside, 'secret.run.json'), join(dir, 'sub', 'x.run.json'))
    return dir
  }

  it("the web view's rundiff, a diff's parent run and an MCP server started in a subdirectory read nothing outside", async () => {
    const dir = await plantedWorkspace()
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false, readOnly: true })
    services.push(service)
    const view = await fetch(`${service.address}/v1/view/rundiff?a=run-000000000001aaaaaaaa&b=run-000000000002bbbbbbbb`, { headers: { authorization: `Bearer ${service.token}` } })
    expect(await view.text()).not.toContain(SECRET)
    const full = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(full)
    const diff = await fetch(`${full.address}/v1/diff`, {
      method: 'POST',
      headers: { authorization: `Bearer ${full.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ a: 'mine.run.json' }),
    })
    expect(await diff.text()).not.toContain(SECRET)
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await createMcpServer({ dir: join(dir, 'sub') }).connect(serverSide)
    const client = new Client({ name: 'test', version: '1' })
    await client.connect(clientSide)
    const fromSub = JSON.stringify(await client.callTool({ name: 'diff', arguments: { a: 'x.run.json', b: 'x.run.json' } }))
    await client.close()
    expect(fromSub).not.toContain(SECRET)
    expect(fromSub).toContain('RequestRefusedError')
  })
})

describe('a file:// layout a sandboxed run or a cloned repository planted', () => {
  const { services } = useServices()

  it('is refused over HTTP and by the CLI when its blob directories are symlinks: no blob is written through them', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const outside = tempDir('layout-outside')
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    const post = async (op: string, args: object) => {
      const res = await fetch(`${service.address}/v1/${op}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(args),
      })
      return { status: res.status, body: (await res.json()) as { error?: { code: string } } }
    }
    expect((await post('snapshot', { message: 'one' })).status).toBe(200)
    // what a sandboxed run may do to its own workspace
    expect((await post('run', { command: ['sh', '-c', `mkdir -p r/blobs q && ln -s ${outside} r/blobs/sha256 && ln -s ${outside} q/blobs`] })).status).toBe(200)
    for (const remote of [`file://${dir}/r:v1`, `file://${dir}/q:v1`]) {
      const pushed = await post('push', { id: 'HEAD', remote })
      expect(pushed.status).toBe(422)
      expect(pushed.body.error?.code).toBe('UnsafePathError')
    }
    const cli = spawnSync(CLI, ['push', 'HEAD', `file://${dir}/r:v1`], { cwd: dir, encoding: 'utf8' })
    expect(cli.status, cli.stderr).toBe(5)
    expect(readdirSync(outside)).toEqual([])
  }, 120_000)

  it('is not read through a symlinked blob directory either', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    expect(spawnSync(CLI, ['snapshot', '-m', 'one'], { cwd: dir }).status).toBe(0)
    const outside = tempDir('layout-read-outside')
    expect(spawnSync(CLI, ['push', 'HEAD', `file://${outside}/real:v1`], { cwd: dir }).status).toBe(0)
    // a layout whose index is its own but whose blobs are someone else's
    const cloned = join(tempDir('layout-cloned'), 'layout')
    mkdirSync(cloned)
    writeFileSync(join(cloned, 'index.json'), readFileSync(join(outside, 'real', 'index.json')))
    symlinkSync(join(outside, 'real', 'blobs'), join(cloned, 'blobs'))
    const { dir: other } = await storeWorkspace({})
    const cli = spawnSync(CLI, ['pull', `file://${cloned}:v1`], { cwd: other, encoding: 'utf8' })
    expect(cli.status, cli.stderr).toBe(5)
    expect(cli.stderr).toContain('symlink')
  }, 120_000)
})

describe('a FIFO named as a run artifact', () => {
  const { children } = useServices()

  for (const asNobody of [false, true])
    it(`is refused promptly over HTTP and the service (run by ${asNobody ? 'nobody' : 'root'}) goes on answering`, async () => {
      const dir = tempDir('fifo-ws')
      const prefix = asNobody ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'] : []
      if (asNobody) chownSync(dir, 65534, 65534)
      const env = { PATH: process.env['PATH']!, HOME: dir, NO_COLOR: '1' }
      const [cmd, ...args] = [...prefix, CLI]
      expect(spawnSync(cmd, [...args, 'init'], { cwd: dir, env }).status).toBe(0)
      expect(spawnSync('mkfifo', [join(dir, 'x.run.json')]).status).toBe(0)
      if (asNobody) chownSync(join(dir, 'x.run.json'), 65534, 65534)
      const child = spawn(cmd, [...args, 'serve', '--listen', '127.0.0.1:0', '--no-watch', '--json'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
      children.push(child)
      let out = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      await until(() => out.includes('\n') || child.exitCode !== null, 'the service to start')
      const { address } = JSON.parse(out) as { address: string }
      const token = readFileSync(join(dir, '.forkpoint', 'service-token'), 'utf8').trim()
      // generous: a service whose event loop is blocked never answers, whatever the deadline
      const diff = await fetch(`${address}/v1/diff`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ a: 'x.run.json', b: 'x.run.json' }),
        signal: AbortSignal.timeout(60_000),
      }).catch((err: Error) => err)
      expect(diff).toBeInstanceOf(Response)
      const answer = diff as Response
      expect(answer.status).toBe(422)
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('RunArtifactError')
      const health = await fetch(`${address}/v1/health`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(60_000) })
      expect(health.status).toBe(200)
    }, 180_000)
})

describe('an S3 remote beneath an allowed prefix', () => {
  it('is refused when its prefix climbs out with . or .. segments', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    expect(spawnSync(CLI, ['snapshot', '-m', 'one'], { cwd: dir }).status).toBe(0)
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await createMcpServer({ dir }, { allowRemotes: ['s3://bucket/team'] }).connect(serverSide)
    const client = new Client({ name: 'test', version: '1' })
    await client.connect(clientSide)
    for (const remote of ['s3://bucket/team/../other:v1', 's3://bucket/team/./../x:v1'])
      expect(JSON.stringify(await client.callTool({ name: 'push', arguments: { id: 'HEAD', remote } })), remote).toContain('RequestRefusedError')
    await client.close()
  })
})

describe('the read-only web view', () => {
  const { services } = useServices()

  it('never finishes a checkout another process left: its branches view reads the files as they lie', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a1', 'b.txt': 'b1', 'c.txt': 'c1' })
    const a = (await snapshotWorkspace({ dir })).id
    for (const name of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(dir, name), `${name} changed`)
    const b = (await snapshotWorkspace({ dir })).id
    await checkout({ dir, id: a })
    await runUntilCrash(LIB, dir, `await lib.checkout({ dir, id: ${JSON.stringify(b)}, force: true })`, { at: 'after-steps', placed: 1 })
    const cutShort = await dirState(dir)
    // a sandboxed command in the workspace itself makes the view read the workspace's changes
    const running = await noteRunningSandbox(store, { branch: null, command: 'agent' })
    try {
      const service = await startService({ dir, listen: '127.0.0.1:0', readOnly: true, watch: false })
      services.push(service)
      const res = await fetch(`${service.address}/v1/view/branches`, { headers: { authorization: `Bearer ${service.token}` } })
      expect(res.status).toBe(200)
      const { workspace } = (await res.json()) as { workspace: { totalChanges: number } }
      expect(workspace.totalChanges).toBeGreaterThan(0)
    } finally {
      await running.done()
    }
    expect(existsSync(store.path('checkout-journal.json'))).toBe(true)
    expect(await dirState(dir)).toEqual(cutShort)
    expect(await readRef(store, 'HEAD')).toBe(a)
  })
})

describe("the store's upkeep over HTTP and MCP: tag, tag_delete, gc, verify", () => {
  const { services } = useServices()

  /** A workspace with a snapshot tagged v1, and a blob only `refs/machines/m` keeps (what a live machine holds). */
  async function heldWorkspace(): Promise<{ dir: string; store: Store; held: Digest }> {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    expect(spawnSync(CLI, ['snapshot', '-m', 'one', '--tag', 'v1'], { cwd: dir }).status).toBe(0)
    const held = await store.writeBlob(Buffer.from('what a live machine started from'))
    await updateRef({ store, name: 'refs/machines/m', id: held, message: 'machine' })
    return { dir, store, held }
  }

  const post = authorizedPost

  it("the web view's read-only service (its token in a page's URL) can neither move nor delete a tag, nor gc", async () => {
    const { dir, store } = await heldWorkspace()
    const garbage = await store.writeBlob(Buffer.from('unreachable'))
    const view = await startService({ dir, listen: '127.0.0.1:0', watch: false, readOnly: true })
    services.push(view)
    for (const [name, body] of [
      ['tag_delete', { name: 'v1' }],
      ['tag', { name: 'v1', id: garbage, force: true }],
      ['gc', { prune: 'now' }],
    ] as const)
      expect((await post(view, name, body)).status, name).toBe(405)
    expect(await readRef(store, 'refs/tags/v1')).not.toBeNull()
    expect(await store.has(garbage)).toBe(true)
  })

  it('a tag name reaches only refs/tags/: another namespace, .. or an absolute path is refused over HTTP and MCP, and gc keeps what they hold', async () => {
    const { dir, store, held } = await heldWorkspace()
    const main = await readRef(store, 'refs/heads/main')
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    const client = await mcpClient(dir)
    const attempts: Array<[string, object]> = [
      ['tag_delete', { name: 'refs/machines/m' }],
      ['tag_delete', { name: 'refs/heads/main' }],
      ['tag', { name: 'refs/heads/main', id: held, force: true }],
      ['tag', { name: 'refs/effects/workspace', id: held }],
      ['tag', { name: '../escape' }],
      ['tag', { name: 'a/../../../escape' }],
      ['tag', { name: '/etc/escape' }],
    ]
    for (const [name, args] of attempts) {
      const what = `${name} ${JSON.stringify(args)}`
      expect((await post(service, name, args)).status, what).toBe(400)
      const called = await client.callTool({ name, arguments: args as Record<string, unknown> })
      expect(called.isError, what).toBe(true)
      expect(JSON.stringify(called), what).toContain('UsageError')
    }
    await client.close()
    expect((await post(service, 'gc', { prune: 'now' })).status).toBe(200)
    expect(await readRef(store, 'refs/machines/m')).toBe(held)
    expect(await store.has(held)).toBe(true)
    expect(await readRef(store, 'refs/heads/main')).toBe(main)
    expect(await readRef(store, 'refs/effects/workspace')).toBeNull()
    expect(readdirSync(join(store.root, 'refs', 'tags'))).toEqual(['v1'])
    expect(existsSync(join(store.root, 'escape')) || existsSync(join(dir, 'escape')) || existsSync('/etc/escape')).toBe(false)
    const verified = (await (await post(service, 'verify', {})).json()) as { ok: boolean }
    expect(verified.ok).toBe(true)
  })

  it("gc between the warm service's scans takes nothing the next snapshot needs", async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n', 'sub/b.txt': 'b\n' })
    expect(spawnSync(CLI, ['snapshot', '-m', 'one'], { cwd: dir }).status).toBe(0)
    const service = await startService({ dir, listen: '127.0.0.1:0' })
    services.push(service)
    writeFileSync(join(dir, 'sub', 'b.txt'), 'changed, scanned by status, referenced by nothing\n')
    expect(((await (await post(service, 'status', {})).json()) as { clean: boolean }).clean).toBe(false)
    const swept = (await (await post(service, 'gc', { prune: 'now' })).json()) as { removed: number }
    expect(swept.removed).toBeGreaterThan(0)
    writeFileSync(join(dir, 'a.txt'), 'a changed\n')
    expect((await post(service, 'snapshot', { message: 'two' })).status).toBe(200)
    expect(((await (await post(service, 'verify', {})).json()) as { ok: boolean }).ok).toBe(true)
    const into = join(tempDir('upkeep-checkout'), 'out')
    expect(spawnSync(CLI, ['checkout', 'HEAD', '--into', into], { cwd: dir }).status).toBe(0)
    expect(readFileSync(join(into, 'sub', 'b.txt'), 'utf8')).toBe('changed, scanned by status, referenced by nothing\n')
  })

  it('MCP tells a client which of them change or discard what is there', async () => {
    const { dir } = await storeWorkspace({})
    const client = await mcpClient(dir)
    const hints = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.annotations]))
    await client.close()
    expect(hints).toMatchObject({
      tag_list: { readOnlyHint: true, destructiveHint: false },
      verify: { readOnlyHint: true, destructiveHint: false },
      tag: { readOnlyHint: false, destructiveHint: false },
      tag_delete: { readOnlyHint: false, destructiveHint: true },
      gc: { readOnlyHint: false, destructiveHint: true },
    })
  })
})

describe('explore and speculate over HTTP and MCP', () => {
  const { services } = useServices()

  it("never run a request's candidates unsandboxed, nor on a queue, nor read the key files it names", async () => {
    const { dir, service } = await servedWorkspace(services)
    const outside = tempDir('pattern-outside')
    const marker = join(outside, 'pwned')
    const planted = `echo pwned > ${marker}`
    const refused = [
      { isolate: false },
      { isolate: false, allowUnsandboxedEffects: true },
      { queue: 'redis://127.0.0.1:1', registry: 'oci://127.0.0.1:1/x' },
      { queueKeyFile: '/etc/shadow' },
      { workerTimeout: false },
    ]
    for (const [name, args] of [
      ['explore', { command: [planted], attempts: 1 }],
      ['speculate', { command: [planted] }],
    ] as const) {
      for (const field of refused) {
        const res = await authorizedPost(service, name, { ...args, ...field })
        expect([name, field, res.status]).toEqual([name, field, 400])
        expect(await mcpCall(dir, name, { ...args, ...field })).toMatch(/"isError":true/)
      }
      expect(existsSync(marker)).toBe(false)
    }
  })

  it("run a request's candidates sandboxed: a write outside the workspace lands nowhere on the host, and the winner is committed", async () => {
    const { dir, service } = await servedWorkspace(services)
    const outside = tempDir('pattern-sandboxed')
    const res = await authorizedPost(service, 'explore', { command: [`echo pwned > ${outside}/pwned; echo won > a.txt`], attempts: 2 })
    const outcome = (await res.json()) as { committed: boolean; results: Array<{ status: string }> }
    expect([res.status, outcome.committed]).toEqual([200, true])
    expect(readdirSync(outside)).toEqual([])
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('won\n')
    const tooMany = await authorizedPost(service, 'speculate', { command: Array.from({ length: 257 }, () => 'true') })
    expect(tooMany.status).toBe(400)
  })
})

describe('recorded runs over HTTP and MCP: runs_show, runs_rm, and runs_export only on the command line', () => {
  const { services } = useServices()
  const SECRET = 'RUN-OUTSIDE-THE-WORKSPACE'

  /** A workspace with one recorded run, a run artifact outside it holding a secret, and a link to that artifact inside it. */
  async function workspaceWithRun(): Promise<{ dir: string; outside: string; runId: string }> {
    const { dir } = await storeWorkspace({})
    const recorded = spawnSync(CLI, ['run', '--record', '--json', '--', process.execPath, '-e', '1'], { cwd: dir, encoding: 'utf8' })
    expect(recorded.status, recorded.stderr).toBe(0)
    const outside = tempDir('runs-outside')
    const exported = spawnSync(CLI, ['runs', 'export', 'latest', '-o', join(outside, 'secret.run.json')], { cwd: dir, encoding: 'utf8' })
    expect(exported.status, exported.stderr).toBe(0)
    const artifact = readFileSync(join(outside, 'secret.run.json'), 'utf8')
    writeFileSync(join(outside, 'secret.run.json'), artifact.replace('"entrypoint":', `"secret": "${SECRET}", "entrypoint":`))
    symlinkSync(join(outside, 'secret.run.json'), join(dir, 'linked.run.json'))
    const runId = (JSON.parse(artifact) as { runId: string }).runId
    return { dir, outside, runId }
  }

  const post = authorizedPost

  it('runs_show reads no run file outside the workspace, through a link, nor in the store', async () => {
    const { dir, outside, runId } = await workspaceWithRun()
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    const client = await mcpClient(dir)
    for (const run of [join(outside, 'secret.run.json'), 'linked.run.json', '.forkpoint/service-token']) {
      const answer = await post(service, 'runs_show', { run })
      const body = await answer.text()
      expect([answer.status, body], run).toEqual([400, expect.stringContaining('RequestRefusedError')])
      expect(body, run).not.toContain(SECRET)
      const called = JSON.stringify(await client.callTool({ name: 'runs_show', arguments: { run } }))
      expect(called, run).toContain('RequestRefusedError')
      expect(called, run).not.toContain(SECRET)
    }
    await client.close()
    expect(((await (await post(service, 'runs_show', { run: 'latest' })).json()) as { run: { runId: string } }).run.runId).toBe(runId)
  })

  it('runs_export writes no file a request names: it is neither an endpoint nor a tool', async () => {
    const { dir, outside } = await workspaceWithRun()
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    const target = join(outside, 'written.run.json')
    expect((await post(service, 'runs_export', { run: 'latest', out: target })).status).toBe(404)
    const client = await mcpClient(dir)
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('runs_export')
    expect((await client.callTool({ name: 'runs_export', arguments: { run: 'latest', out: target } })).isError).toBe(true)
    await client.close()
    expect(existsSync(target)).toBe(false)
  })

  it("the web view's read-only service cannot forget a run; the full service forgets runs by id only", async () => {
    const { dir, runId } = await workspaceWithRun()
    const view = await startService({ dir, listen: '127.0.0.1:0', watch: false, readOnly: true })
    services.push(view)
    expect((await post(view, 'runs_rm', { runs: ['latest'] })).status).toBe(405)
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    for (const spec of ['../../etc/passwd', '/etc/passwd', 'linked.run.json']) expect((await post(service, 'runs_rm', { runs: [spec] })).status, spec).not.toBe(200)
    expect(existsSync('/etc/passwd') && existsSync(join(dir, 'linked.run.json'))).toBe(true)
    expect(await (await post(service, 'runs_rm', { runs: ['latest'] })).json()).toEqual({ removed: [runId] })
    expect(await (await post(service, 'runs', {})).json()).toEqual({ runs: [] })
  })
})

describe("replay over HTTP and MCP: the command line's own fields are refused", () => {
  const { services } = useServices()

  it('no command of the caller, no recorded command from elsewhere, no live calls, no regular expressions of the caller', async () => {
    const { dir } = await storeWorkspace({})
    const recorded = spawnSync(CLI, ['run', '--record', '--', process.execPath, '-e', '1'], { cwd: dir, encoding: 'utf8' })
    expect(recorded.status, recorded.stderr).toBe(0)
    const marker = join(tempDir('replay-local'), 'ran')
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    const client = await mcpClient(dir)
    const attempts = [
      { command: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`] },
      { trustCommand: true },
      { liveFrom: 0 },
      { redactPattern: ['(a+)+$'] },
      { redactKey: ['k'] },
      { redactPath: ['$.x'] },
    ]
    for (const extra of attempts) {
      const what = JSON.stringify(extra)
      const answer = await authorizedPost(service, 'replay', { run: 'latest', ...extra })
      expect([answer.status, await answer.text()], what).toEqual([400, expect.stringContaining('UsageError')])
      expect((await client.callTool({ name: 'replay', arguments: { run: 'latest', ...extra } })).isError, what).toBe(true)
    }
    await client.close()
    expect(existsSync(marker)).toBe(false)
    const plain = await authorizedPost(service, 'replay', { run: 'latest' })
    expect(await plain.json()).toMatchObject({ served: 0, stdout: '' })
  })
})

describe('branch over HTTP and MCP: no mount at a path of the caller, no disk image', () => {
  const { services } = useServices()

  it('path and disk are refused; the branch and the listing are served', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    expect(spawnSync(CLI, ['snapshot', '-m', 'one'], { cwd: dir }).status).toBe(0)
    const target = join(tempDir('branch-local'), 'mounted')
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    services.push(service)
    const post = (name: string, body: object) =>
      fetch(`${service.address}/v1/${name}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const client = await mcpClient(dir)
    for (const extra of [{ path: target }, { disk: '1G' }]) {
      const what = JSON.stringify(extra)
      // refused as an argument the schema does not have, before the branch is made
      const answer = await post('branch', { name: 'try', ...extra })
      expect([answer.status, await answer.text()], what).toEqual([400, expect.stringMatching(/UsageError.*Unrecognized key/)])
      expect(JSON.stringify(await client.callTool({ name: 'branch', arguments: { name: 'try', ...extra } })), what).toMatch(/"isError":true/)
    }
    await client.close()
    expect(existsSync(target)).toBe(false)
    expect(await (await post('branch_list', {})).json()).toEqual({ branches: [] })
    expect((await post('branch', { name: 'try', backend: 'copy' })).status).toBe(200)
    expect(await (await post('branch_list', {})).json()).toMatchObject({ branches: [{ name: 'try' }] })
    expect(spawnSync(CLI, ['abort', 'try'], { cwd: dir }).status).toBe(0)
  })
})

describe("snapshot over HTTP and MCP: the layers only the caller's machine holds", () => {
  const { services } = useServices()

  it("never records the service's environment, a file or directory a request names, or links out of the workspace", async () => {
    const { dir, service } = await servedWorkspace(services, { FORKPOINT_TEST_SECRET_NAME: 'service-only' })
    const outside = tempDir('snapshot-outside')
    writeFileSync(join(outside, 'messages.jsonl'), '{"role":"user","content":"from outside"}\n')
    for (const field of [
      { env: true },
      { env: true, keepEnv: ['FORKPOINT_TEST_SECRET_NAME'] },
      { trace: join(outside, 'messages.jsonl') },
      { model: outside },
      { allowExternalSymlinks: true },
    ]) {
      const res = await authorizedPost(service, 'snapshot', { message: 'remote', allowEmpty: true, ...field })
      expect([field, res.status]).toEqual([field, 400])
      expect(await mcpCall(dir, 'snapshot', { message: 'remote', allowEmpty: true, ...field })).toMatch(/"isError":true/)
    }
    const log = spawnSync(CLI, ['log', '--json'], { cwd: dir, encoding: 'utf8' })
    expect(log.stdout).not.toContain('remote')
  })
})

describe("run, record and merge over HTTP and MCP: the caller's variables, files and paths stay the command line's", () => {
  const { services } = useServices()

  it("run never passes in the service's variables, a file or a host path a request names; record runs nothing outside a sandbox", async () => {
    const { dir, service } = await servedWorkspace(services, { FORKPOINT_TEST_SECRET_NAME: 'service-only' })
    const outside = tempDir('run-outside')
    writeFileSync(join(outside, 'vars'), 'LEAKED=from-a-file\n')
    const marker = join(outside, 'recorded')
    const command = ['sh', '-c', `env; cat ${outside}/vars; ls ${outside}`]
    for (const field of [{ env: ['FORKPOINT_TEST_SECRET_NAME'] }, { envFrom: join(outside, 'vars') }, { expose: [outside] }]) {
      const what = JSON.stringify(field)
      const res = await authorizedPost(service, 'run', { command, ...field })
      expect([res.status, await res.text()], what).toEqual([400, expect.stringMatching(/UsageError.*Unrecognized key/)])
      expect(await mcpCall(dir, 'run', { command, ...field }), what).toMatch(/"isError":true/)
    }
    const limited = await authorizedPost(service, 'run', { command, pids: 64, memory: '256M', cpu: 30 })
    const ran = (await limited.json()) as { stdout: string; exitCode: number }
    expect(ran.stdout).not.toMatch(/service-only|from-a-file/)
    expect(ran.exitCode).not.toBe(0) // the directory is not there inside
    const record = { command: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`] }
    expect((await authorizedPost(service, 'record', record)).status).toBe(404)
    expect(await mcpCall(dir, 'record', record)).toMatch(/"isError":true/)
    expect(existsSync(marker)).toBe(false)
  })

  it('merge never follows a link out of the workspace for a request', async () => {
    const { dir, service } = await servedWorkspace(services)
    const res = await authorizedPost(service, 'merge', { from: 'HEAD', allowExternalSymlinks: true })
    expect([res.status, await res.text()]).toEqual([400, expect.stringMatching(/UsageError.*Unrecognized key/)])
    expect(await mcpCall(dir, 'merge', { from: 'HEAD', allowExternalSymlinks: true })).toMatch(/"isError":true/)
  })
})
