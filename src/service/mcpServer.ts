import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { ForkpointError } from '../errors/index.js'
import { resolve } from 'node:path'
import { type StoreLocator, openStore } from '../store/findStore.js'
import { z } from 'zod'
import type { RequestPolicy } from '../operations/requestPolicy.js'
import { packageVersion } from '../util/ownPackage.js'
import { type AnyOperation, offeredOn, remoteInput } from '../operations/operation.js'
import { inOperationWords, serviceErrorJson } from '../operations/operationWords.js'
import { runOperation } from '../operations/runOperation.js'
import { OPERATIONS } from '../operations/table.js'

/** The operations MCP clients get as tools. */
export function mcpTools(table: readonly AnyOperation[] = OPERATIONS): AnyOperation[] {
  return table.filter((op) => !op.query && offeredOn(op, 'mcp'))
}

/**
 * What the tools may reach besides the workspace: directories whose files requests may name
 * (a run artifact to replay or diff, a `file://` remote), and the remotes push and pull may use.
 */
export interface McpOptions {
  allowPaths?: string[]
  allowRemotes?: string[]
  /** The environment tools get (keys, what a sandboxed run inherits): the edge that starts the server passes it; default none. */
  env?: NodeJS.ProcessEnv
}

/** An MCP server whose tools act on the store `where` locates; files and remotes a request names are confined (requestPolicy). */
export function createMcpServer(where: StoreLocator, { allowPaths = [], allowRemotes = [], env = {} }: McpOptions = {}, table: readonly AnyOperation[] = OPERATIONS): McpServer {
  let policy: Promise<RequestPolicy> | null = null
  const confined = () =>
    (policy ??= openStore(where).then(({ store, workspace }) => ({ workspace, store: store.root, allowPaths: allowPaths.map((p) => resolve(p)), allowRemotes })))
  const server = new McpServer({ name: 'forkpoint', version: packageVersion() })
  for (const op of mcpTools(table)) {
    const { readOnly, destructive, idempotent } = op.annotations
    const config = {
      description: op.description,
      inputSchema: z.object(remoteInput(op)).strict(),
      outputSchema: asObjectSchema(op.output),
      annotations: { readOnlyHint: readOnly, destructiveHint: destructive, idempotentHint: idempotent },
    }
    server.registerTool(op.name, config, async (args: unknown, extra: { signal: AbortSignal }) =>
      answer(async () => runOperation(op, where, args, { signal: extra.signal, policy: await confined(), env })),
    )
  }
  return server
}

/**
 * MCP lists only output schemas of type object: a result of one of several shapes (each an
 * object) is listed as an object with the shapes as its `anyOf`.
 */
function asObjectSchema(output: z.ZodType<object>): z.ZodType<object> {
  if (output instanceof z.ZodObject) return output
  const { $schema: _schema, ...shapes } = z.toJSONSchema(output, { io: 'output', target: 'draft-7' }) as Record<string, unknown>
  return z.looseObject({}).meta(shapes)
}

/** A result as structured content (and as JSON text, for clients that read only text), or an error (`isError`, with its code and exit code) whose next steps name tools, not CLI commands. */
async function answer(call: () => Promise<object>): Promise<CallToolResult> {
  try {
    const result = await call()
    return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result as Record<string, unknown> }
  } catch (err) {
    if (!(err instanceof ForkpointError)) throw err
    return {
      isError: true,
      content: [
        { type: 'text', text: `forkpoint: ${inOperationWords(err.message)}` },
        { type: 'text', text: JSON.stringify(serviceErrorJson(err as ForkpointError<object>)) },
      ],
    }
  }
}

/**
 * `forkpoint mcp`: serve the tools over stdin/stdout until the client closes stdin; the
 * requests read by then are answered first (a commit or a sandboxed run is not cut off,
 * and a client that writes its requests and closes gets its answers).
 */
export async function serveMcpStdio(where: StoreLocator, options: McpOptions = {}): Promise<void> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js')
  const server = createMcpServer(where, options)
  const transport = new StdioServerTransport()
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve))
  await server.connect(transport)
  // requests received and not yet answered, by id
  const unanswered = new Set<string | number>()
  let ending = false
  const closeWhenAnswered = () => ending && unanswered.size === 0 && void server.close()
  const receive = transport.onmessage!
  transport.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && 'id' in message) unanswered.add(message.id)
    receive(message)
  }
  const send = transport.send.bind(transport)
  transport.send = async (message: JSONRPCMessage) => {
    await send(message)
    if (!('method' in message) && 'id' in message && message.id !== undefined) unanswered.delete(message.id)
    closeWhenAnswered()
  }
  process.stdin.once('end', () => {
    ending = true
    closeWhenAnswered()
  })
  await closed
}
