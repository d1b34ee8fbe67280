import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { ObjectNotFoundError, checkout, snapshotWorkspace } from '../../src/index.js'
import { startService, type RunningService } from '../../src/service/httpService.js'
import { createMcpServer } from '../../src/service/mcpServer.js'
import { readHead, updateRef } from '../../src/store/refs.js'
import { resolveId } from '../../src/store/resolveId.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { fp } from '../helpers/cli.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** Three snapshots on main, s0 <- s1 <- s2, then a merge m of s2 and a side snapshot x (m's second parent). */
async function history() {
  const { dir, store } = await storeWorkspace({ 'f.txt': 'start\n' })
  const ids: string[] = []
  for (let i = 0; i < 3; i++) {
    await fs.writeFile(join(dir, 'f.txt'), `${i}\n`)
    ids.push((await snapshotWorkspace({ dir, message: `s${i}` })).id)
  }
  const [s0, s1, s2] = ids as [string, string, string]
  const tree = (await readSnapshot(store, s2 as never)).world.tree
  const x = await store.writeObject(makeSnapshot({ parents: [s0 as never], tree, message: 'x' }))
  const m = await store.writeObject(makeSnapshot({ parents: [s2 as never, x], tree, message: 'm' }))
  await updateRef({ store, name: 'refs/heads/merged', id: m, message: 'test' })
  return { dir, store, s0, s1, s2, x, m }
}

describe('ancestry steps after a name: ~N and ^N', () => {
  it('resolves ^ as the first parent, ^2 as the second, and any chain of ~ and ^ steps', async () => {
    const { store, s0, s1, s2, x, m } = await history()
    expect(await resolveId(store, 'HEAD^')).toBe(s1)
    expect(await resolveId(store, 'HEAD^^')).toBe(s0)
    expect(await resolveId(store, 'HEAD~')).toBe(s1)
    expect(await resolveId(store, 'main~1^')).toBe(s0)
    expect(await resolveId(store, `${s2.slice(7, 19)}^1~1`)).toBe(s0)
    expect(await resolveId(store, 'merged^')).toBe(s2)
    expect(await resolveId(store, 'merged^2')).toBe(x)
    expect(await resolveId(store, 'merged^2^')).toBe(s0)
    expect(await resolveId(store, 'merged~2^')).toBe(s0)
    expect(await resolveId(store, 'merged^0')).toBe(m)
  })

  it('refuses a step past the first snapshot, or a parent a snapshot lacks, as ObjectNotFoundError (exit 2) saying so', async () => {
    const { store } = await history()
    for (const [spec, why] of [
      ['HEAD~99', /HEAD~99 goes past the first snapshot: its history has only 2 snapshots before it/],
      ['HEAD^^^', /HEAD\^\^\^ goes past the first snapshot: its history has only|has no parent/],
      ['HEAD^2', /HEAD\^2 goes past the first snapshot: \S+ has only 1 parent$/],
      ['merged^3', /has only 2 parents$/],
    ] as const) {
      const err = await resolveId(store, spec).catch((e: unknown) => e)
      expect(err, spec).toBeInstanceOf(ObjectNotFoundError)
      expect((err as ObjectNotFoundError).exitCode).toBe(2)
      expect((err as Error).message).toMatch(why)
    }
  })
})

describe('checkout HEAD~N in place', () => {
  it('moves the workspace back (library and CLI) and detaches HEAD; a head name makes HEAD follow it again', async () => {
    const { dir, store, s1 } = await history()
    expect(await checkout({ dir, id: 'HEAD~1' })).toMatchObject({ id: s1, mode: 'in-place' })
    expect(await fs.readFile(join(dir, 'f.txt'), 'utf8')).toBe('1\n')
    expect(await readHead(store)).toEqual({ type: 'detached', id: s1 })
    await checkout({ dir, id: 'main' })
    expect(await readHead(store)).toEqual({ type: 'symbolic', ref: 'refs/heads/main' })
    const cli = await fp(dir, 'checkout', 'main^^')
    expect([cli.code, cli.stderr]).toEqual([0, ''])
    expect(await fs.readFile(join(dir, 'f.txt'), 'utf8')).toBe('0\n')
    const past = await fp(dir, 'checkout', 'HEAD~9')
    expect([past.code, past.stderr.trim()]).toEqual([2, expect.stringMatching(/HEAD~9 goes past the first snapshot/)])
  })
})

const services: RunningService[] = []
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()))
})

describe('HEAD~N and HEAD^ through MCP and HTTP', () => {
  it('checks out HEAD^ over MCP and HEAD~2 over HTTP in place', async () => {
    const { dir } = await history()
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await createMcpServer({ dir }).connect(serverSide)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(clientSide)
    const result = (await client.callTool({ name: 'checkout', arguments: { id: 'HEAD^' } })) as CallToolResult
    expect(result.isError ?? false).toBe(false)
    expect(await fs.readFile(join(dir, 'f.txt'), 'utf8')).toBe('1\n')

    const service = await startService({ dir })
    services.push(service)
    const answer = await postJson(service.address, 'checkout', { id: 'main~2' })
    expect(answer.status).toBe(200)
    expect(await fs.readFile(join(dir, 'f.txt'), 'utf8')).toBe('0\n')
  })
})

async function postJson(address: string, op: string, body: object): Promise<{ status: number; text: string }> {
  const { request } = await import('node:http')
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: address.slice('unix:'.length), method: 'POST', path: `/v1/${op}`, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}
