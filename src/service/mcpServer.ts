import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { ForkpointError } from '../errors/index.js'
import { resolve } from 'node:path'
import { type StoreLocator, openStore } from '../store/findStore.js'
import type { RequestPolicy } from './requestPolicy.js'
import { packageVersion } from '../util/ownPackage.js'
import { OPERATIONS, OPERATION_NAMES, type OperationContext } from './operations.js'
import { inOperationWords, serviceErrorJson } from './operationWords.js'

/** The operations MCP clients get as tools (the HTTP service has a few more). */
export const TOOL_NAMES = OPERATION_NAMES.filter((name) => (OPERATIONS[name] as { mcp?: false }).mcp !== false)

/** What the tools may reach besides the workspace: directories whose files requests may name (a run artifact to replay or diff). */
export interface McpOptions {
  allowPaths?: string[]
}

/** An MCP server whose tools act on the store `where` locates; files a request names are confined to the workspace and `allowPaths` (requestPolicy). */
export function createMcpServer(where: StoreLocator, { allowPaths = [] }: McpOptions = {}): McpServer {
  let policy: Promise<RequestPolicy> | null = null
  const confined = () =>
    (policy ??= openStore(where).then(({ store, workspace }) => ({ workspace, store: store.root, allowPaths: allowPaths.map((p) => resolve(p)), allowRemotes: [] })))
  const server = new McpServer({ name: 'forkpoint', version: packageVersion() })
  for (const name of TOOL_NAMES) {
    const tool = OPERATIONS[name]
    server.registerTool(name, { description: tool.description, inputSchema: tool.input }, async (args: unknown, extra: { signal: AbortSignal }) =>
      answer(async () =>
        (tool.run as (where: StoreLocator, args: unknown, ctx: OperationContext) => Promise<object>)(where, args, { signal: extra.signal, policy: await confined() }),
      ),
    )
  }
  return server
}

/** A result as JSON text, or an error (`isError`, with its code and exit code) whose next steps name tools, not CLI commands. */
async function answer(call: () => Promise<object>): Promise<CallToolResult> {
  try {
    return { content: [{ type: 'text', text: JSON.stringify(await call(), null, 2) }] }
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
