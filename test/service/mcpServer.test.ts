import { spawn } from 'node:child_process'
import { existsSync, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { createMcpServer, mcpTools } from '../../src/service/mcpServer.js'

const TOOL_NAMES = mcpTools().map((op) => op.name)
import { CLI, fp } from '../helpers/cli.js'
import { eventually, processesWith } from '../patterns/leftovers.js'
import { conflictingHeads } from '../helpers/conflicting.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** A client connected in-process to a server for the workspace `dir`. */
async function connect(dir: string): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await createMcpServer({ dir }).connect(serverSide)
  const client = new Client({ name: 'test', version: '1.0.0' })
  await client.connect(clientSide)
  return client
}

/** Call a tool and expect success: its JSON result. */
async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
  if (result.isError) throw new Error(`${name} failed: ${text}`)
  return JSON.parse(text) as T
}

/** Call a tool and expect an error result: its text. */
async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<string[]> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  expect(result.isError).toBe(true)
  return result.content.map((c) => (c.type === 'text' ? c.text : ''))
}

describe('the MCP server', () => {
  it('lists one tool per operation, each with a description and an input schema', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const { tools } = await (await connect(dir)).listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort())
    expect(TOOL_NAMES).toEqual([
      ...['snapshot', 'status', 'diff', 'log', 'checkout', 'branch', 'branch_list', 'commit', 'commit_continue', 'commit_abort', 'abort', 'run', 'fork', 'explore', 'speculate'],
      ...['merge', 'merge_continue', 'merge_abort', 'show', 'runs', 'runs_show', 'runs_rm', 'replay', 'push', 'pull'],
      ...['tag', 'tag_list', 'tag_delete', 'verify', 'gc', 'effects', 'effects_recover'],
    ])
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(20)
      expect(tool.inputSchema.type).toBe('object')
    }
    expect(tools.find((t) => t.name === 'checkout')!.inputSchema.required).toEqual(['id'])
  })

  it('answers every tool on a real workspace: snapshot, status, diff, log, checkout, fork, merge', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'one\n' })
    const client = await connect(dir)
    const first = await call<{ id: string }>(client, 'snapshot', { message: 'first' })
    expect(await call(client, 'status')).toMatchObject({ clean: true, head: first.id })
    await fs.writeFile(join(dir, 'a.txt'), 'two\n')
    expect(await call(client, 'status')).toMatchObject({ clean: false, changes: [{ path: 'a.txt', status: 'modified' }] })
    expect(await call(client, 'diff', { a: 'HEAD' })).toMatchObject({ changes: [{ path: 'a.txt', status: 'modified' }] })
    const second = await call<{ id: string }>(client, 'snapshot', { message: 'second' })
    const { entries } = await call<{ entries: Array<{ id: string; message: string }> }>(client, 'log', {})
    expect(entries.map((e) => e.message)).toEqual(['second', 'first'])
    expect((await call<{ entries: unknown[] }>(client, 'log', { limit: 1 })).entries).toHaveLength(1)
    await call(client, 'checkout', { id: first.id })
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\n')
    const { children } = await call<{ children: Array<{ id: string }> }>(client, 'fork', { id: second.id, count: 2 })
    expect(children).toHaveLength(2)
    await call(client, 'checkout', { id: 'main' })
    expect(await call(client, 'merge', { from: children[0]!.id })).toMatchObject({ outcome: 'fast-forward' })
    expect(await call(client, 'status')).toMatchObject({ clean: true })
  })

  it('branches, runs a command sandboxed in the branch, commits one branch and aborts another', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const client = await connect(dir)
    await call(client, 'snapshot', {})
    await call(client, 'branch', { name: 'try' })
    const ran = await call<{ exitCode: number; stdout: string; changedPaths: string[] }>(client, 'run', {
      command: ['sh', '-c', 'echo made > new.txt && echo done'],
      branch: 'try',
    })
    expect(ran).toMatchObject({ exitCode: 0, stdout: 'done\n', changedPaths: ['new.txt'] })
    await expect(fs.readFile(join(dir, 'new.txt'), 'utf8')).rejects.toThrow() // not before the commit
    await call(client, 'commit', { name: 'try' })
    expect(await fs.readFile(join(dir, 'new.txt'), 'utf8')).toBe('made\n')
    await call(client, 'branch', { name: 'discard' })
    await call(client, 'run', { command: ['sh', '-c', 'rm a.txt'], branch: 'discard' })
    await call(client, 'abort', { name: 'discard' })
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('a')
    expect((await call<{ exitCode: number }>(client, 'run', { command: ['sh', '-c', 'exit 3'] })).exitCode).toBe(3)
  })

  it('kills a sandboxed command when the client cancels its call', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const client = await connect(dir)
    const marker = `${process.pid}${Date.now() % 100000}` // a sleep no other process runs
    const cancel = new AbortController()
    const call = client.callTool({ name: 'run', arguments: { command: ['sh', '-c', `touch started; exec sleep 7${marker}`] } }, undefined, { signal: cancel.signal })
    expect(await eventually(() => existsSync(join(dir, 'started')), 120_000)).toBe(true)
    expect(await eventually(() => processesWith(`7${marker}`).length > 0, 120_000)).toBe(true)
    cancel.abort()
    await expect(call).rejects.toThrow()
    expect(await eventually(() => processesWith(`7${marker}`).length === 0, 120_000)).toBe(true)
  })

  it('lists recorded runs and replays one offline, its output in the result', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    expect((await fp(dir, 'run', '--record', '--', process.execPath, '-e', 'console.log("agent says hi")')).code).toBe(0)
    const client = await connect(dir)
    const { runs } = await call<{ runs: Array<{ runId: string }> }>(client, 'runs', {})
    expect(runs).toHaveLength(1)
    const replayed = await call<{ runId: string; stdout: string }>(client, 'replay', { run: 'latest' })
    expect(replayed).toMatchObject({ runId: runs[0]!.runId, stdout: 'agent says hi\n' })
  })

  it("gives a failing operation's error as the CLI words it, with its code and exit code", async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const client = await connect(dir)
    await call(client, 'snapshot', {})
    const [message, json] = await refused(client, 'checkout', { id: 'no-such-snapshot' })
    const cli = await fp(dir, 'checkout', 'no-such-snapshot')
    expect(cli.code).not.toBe(0)
    expect(cli.stderr.trim()).toBe(message)
    expect(JSON.parse(json!)).toMatchObject({ error: { exitCode: cli.code } })
    expect((await refused(client, 'commit', { name: 'never-made' }))[0]).toMatch(/^forkpoint: .*never-made/)
  })

  it('refuses bad arguments without calling the operation', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const client = await connect(dir)
    for (const [name, args] of [
      ['checkout', {}],
      ['checkout', { id: 42 }],
      ['fork', { count: 0 }],
      ['fork', { count: 1.5 }],
      ['run', { command: [] }],
      ['run', { command: ['true'], net: 'everywhere' }],
      ['branch', { name: 'x', backend: 'zfs' }],
      ['log', { limit: -1 }],
    ] as const) {
      const [text] = await refused(client, name, args)
      expect(text).toMatch(/invalid|validation/i)
    }
    expect((await call(client, 'status')).head).toBeNull() // nothing ran: no snapshot, no branch
    await expect(client.callTool({ name: 'no-such-tool', arguments: {} })).resolves.toMatchObject({ isError: true })
  })

  it('serves over stdio from `forkpoint mcp`, a command’s output kept off the protocol and its stdin', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    // an agent that reads its stdin to the end: replayed through the server, it must not wait on the protocol's
    const reader = "let n = 0; process.stdin.on('data', (d) => (n += d.length)).on('end', () => console.log('stdin bytes: ' + n))"
    expect((await fp(dir, 'run', '--record', '--', process.execPath, '-e', reader)).code).toBe(0)
    const transport = new StdioClientTransport({ command: CLI, args: ['mcp'], cwd: dir, stderr: 'pipe' })
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(transport)
    try {
      expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length)
      const snap = await call<{ id: string }>(client, 'snapshot', { message: 'over stdio' })
      expect(await call(client, 'run', { command: ['sh', '-c', 'echo loud; echo louder >&2'] })).toMatchObject({ stdout: 'loud\n', stderr: 'louder\n' })
      expect(await call(client, 'status')).toMatchObject({ head: snap.id })
      expect(await call(client, 'replay', { run: 'latest' })).toMatchObject({ stdout: 'stdin bytes: 0\n' })
    } finally {
      await client.close()
    }
  })

  it('answers the calls a client wrote before closing stdin, then exits', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run', arguments: { command: ['sh', '-c', 'sleep 1; echo slow'] } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'snapshot', arguments: { message: 'piped' } } },
    ]
    const child = spawn(CLI, ['mcp'], { cwd: dir, stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stdin.end(messages.map((m) => JSON.stringify(m)).join('\n') + '\n')
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(code).toBe(0)
    const replies = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; result: CallToolResult })
    expect(replies.map((r) => r.id).sort()).toEqual([1, 2, 3])
    const text = (id: number) => (replies.find((r) => r.id === id)!.result.content[0] as { text: string }).text
    expect(JSON.parse(text(2))).toMatchObject({ exitCode: 0, stdout: 'slow\n' })
    expect(await call(await connect(dir), 'log', {})).toMatchObject({ entries: [{ message: 'piped' }] })
  })

  it('gives merge_continue and merge_abort, and its errors name tools, not CLI commands', async () => {
    const { dir } = await conflictingHeads()
    const client = await connect(dir)
    expect(await call(client, 'merge', { from: 'other' })).toMatchObject({ outcome: 'conflict', inProgress: true })
    const [again] = await refused(client, 'merge', { from: 'other' })
    expect(again).toContain('finish it with merge_continue or undo it with merge_abort')
    expect(again).not.toContain("'forkpoint")
    expect((await refused(client, 'merge_continue', {}))[0]).toContain('conflict markers remain in f.txt')
    expect(await call(client, 'merge_abort')).toHaveProperty('head')
    expect(await fs.readFile(join(dir, 'f.txt'), 'utf8')).toBe('1\nours\n3\n')
    expect(await call(client, 'status')).toMatchObject({ clean: true, merge: null })
  })
})
