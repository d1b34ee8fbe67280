import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { Command } from 'commander'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { commands } from '../../src/cli/commands/index.js'
import { registerOperationCommands } from '../../src/cli/operationCommands.js'
import { type AnyOperation, defineOperation } from '../../src/operations/operation.js'
import { startService } from '../../src/service/httpService.js'
import { createMcpServer } from '../../src/service/mcpServer.js'
import { openApiDocument } from '../../src/service/openApi.js'
import { NOT_OPERATIONS, OPERATIONS } from '../../src/operations/table.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** An operation only this test's table has: declared once, it must appear on every surface. */
const echo = defineOperation({
  name: 'echo',
  description: 'Say the text back, louder when asked.',
  input: { text: z.string().min(1).describe('what to say'), times: z.number().int().min(1).optional().describe('how often') },
  output: z.object({ said: z.string() }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { usage: 'echo <text>', short: { times: 't' }, rendering: { human: (r) => `said: ${r.said}` } },
  async run(_where, { text, times }) {
    return { said: Array.from({ length: times ?? 1 }, () => text).join(' ') }
  },
})
const TABLE: AnyOperation[] = [echo]

afterEach(() => {
  vi.restoreAllMocks()
  process.exitCode = undefined
})

describe('an operation added to the table', () => {
  it('is a command of the CLI, its flags made from the input schema', async () => {
    const { dir } = await storeWorkspace()
    const written: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0)
    const program = new Command('forkpoint').exitOverride()
    registerOperationCommands(program, TABLE)
    expect(program.commands.map((c) => c.name())).toEqual(['echo'])
    expect(program.commands[0]!.options.map((o) => o.flags)).toContain('-t, --times <n>')
    await program.parseAsync(['echo', 'hi', '-t', '2', '-C', dir], { from: 'user' })
    await program.parseAsync(['echo', 'hi', '--json', '-C', dir], { from: 'user' })
    expect(written.join('')).toBe('said: hi hi\n{\n  "schemaVersion": 1,\n  "said": "hi"\n}\n')
    await expect(program.parseAsync(['echo', 'hi', '--times', '0'], { from: 'user' })).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
  })

  it('is a subcommand when its usage has several words, under the command of its first word', async () => {
    const { dir } = await storeWorkspace()
    const written: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0)
    const backwards = defineOperation({
      name: 'echo_backwards',
      description: 'Say the text back, backwards.',
      input: { text: z.string().min(1) },
      output: z.object({ said: z.string() }),
      annotations: { readOnly: true, destructive: false, idempotent: true },
      cli: { usage: 'echo backwards <text>', rendering: { human: (r) => `backwards: ${r.said}` } },
      async run(_where, { text }) {
        return { said: [...text].reverse().join('') }
      },
    })
    const program = new Command('forkpoint').exitOverride()
    registerOperationCommands(program, [backwards, echo])
    expect(program.commands.map((c) => c.name())).toEqual(['echo'])
    expect(program.commands[0]!.commands.map((c) => c.name())).toEqual(['backwards'])
    await program.parseAsync(['echo', 'backwards', 'hi', '-C', dir], { from: 'user' })
    await program.parseAsync(['echo', 'hi', '-C', dir], { from: 'user' })
    expect(written.join('')).toBe('backwards: ih\nsaid: hi\n')
  })

  it('is an HTTP endpoint and a path of the OpenAPI document with its typed answer', async () => {
    const { dir } = await storeWorkspace()
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false }, TABLE)
    try {
      const post = (body: object) =>
        fetch(`${service.address}/v1/echo`, {
          method: 'POST',
          headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      expect(await (await post({ text: 'hi', times: 3 })).json()).toEqual({ said: 'hi hi hi' })
      expect((await post({ text: 'hi', extra: 1 })).status).toBe(400)
      const document = (await (await fetch(`${service.address}/openapi.json`, { headers: { authorization: `Bearer ${service.token}` } })).json()) as {
        paths: Record<string, { post: { operationId: string; responses: { 200: { content: { 'application/json': { schema: object } } } } } }>
      }
      expect(Object.keys(document.paths)).toEqual(['/v1/health', '/v1/echo'])
      expect(document.paths['/v1/echo']!.post.operationId).toBe('echo')
      expect(document.paths['/v1/echo']!.post.responses[200].content['application/json'].schema).toMatchObject({
        type: 'object',
        properties: { said: { type: 'string' } },
        required: ['said'],
      })
    } finally {
      await service.close()
    }
    expect(openApiDocument('1', { address: 'unix:/x', bearer: false }, TABLE)).not.toHaveProperty('servers')
  })

  it('is an MCP tool with its output schema and annotations, answering with structured content', async () => {
    const { dir } = await storeWorkspace()
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await createMcpServer({ dir }, {}, TABLE).connect(serverSide)
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(clientSide)
    const { tools } = await client.listTools()
    expect(tools).toHaveLength(1)
    expect(tools[0]).toMatchObject({
      name: 'echo',
      outputSchema: { type: 'object', properties: { said: { type: 'string' } } },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
    })
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi', times: 2 } })).toMatchObject({ structuredContent: { said: 'hi hi' } })
    const refused = await client.callTool({ name: 'echo', arguments: { text: 'hi', extra: 1 } })
    expect(refused.isError).toBe(true)
  })
})

/** The command line as `forkpoint` makes it: the commands of their own, then the table's. */
function wholeProgram(): Command {
  const program = new Command('forkpoint')
  for (const register of commands) register(program)
  registerOperationCommands(program, OPERATIONS)
  return program
}

/** The commands of a program that are neither made from the table nor declared no operation. */
function undeclared(program: Command): string[] {
  const generated = OPERATIONS.flatMap((op) => (op.cli ? [op.cli.usage.split(' ')[0]!] : []))
  return program.commands.map((c) => c.name()).filter((name) => !generated.includes(name) && !Object.hasOwn(NOT_OPERATIONS, name))
}

describe('every command of the command line', () => {
  it('is made from the table or declared no operation with why', () => {
    const program = wholeProgram()
    const names = program.commands.map((c) => c.name())
    expect(undeclared(program)).toEqual([])
    expect(new Set(names).size, 'a command registered twice').toBe(names.length)
    for (const [name, why] of Object.entries(NOT_OPERATIONS)) {
      expect(names, `NOT_OPERATIONS names ${name}, which the command line no longer has`).toContain(name)
      expect(why.length).toBeGreaterThan(20)
    }
  })

  it('a command added without a place in the table is found', () => {
    const program = wholeProgram()
    program.command('frobnicate').action(() => undefined)
    expect(undeclared(program)).toEqual(['frobnicate'])
  })
})
