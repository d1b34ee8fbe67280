import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { ForkpointError } from '../errors/index.js'
import type { StoreLocator } from '../store/findStore.js'
import { requirePackage } from '../util/requirePackage.js'

/** A tool's handler: the server's store locator, the checked arguments and the client's cancel in, a JSON-able result out. */
type Handler<Args> = (where: StoreLocator, args: Args, signal: AbortSignal) => Promise<object>

const id = z.string().min(1).describe('a snapshot id, short id, head, tag or HEAD~N')
const branchName = z.string().min(1).describe('a branch name (PARENT/NAME for a branch of a branch)')

/**
 * The tools: the CLI's workspace operations, each on the store the server was started for.
 * Results are the JSON the CLI prints with `--json`; the library loads each operation's
 * modules when the tool is first called, as the CLI does.
 */
const TOOLS = {
  snapshot: {
    description: 'Snapshot the workspace (files, and the run recorded since the last snapshot) as a new image; HEAD moves to it.',
    input: { message: z.string().optional().describe('what this snapshot is') },
    run: (async (where, { message }) => {
      const { snapshotAgent } = await import('../image/snapshotAgent.js')
      return snapshotAgent({ ...where, ...(message === undefined ? {} : { message }) })
    }) as Handler<{ message?: string | undefined }>,
  },
  status: {
    description: "The workspace's changes since HEAD, HEAD's id and branch, and a merge in progress if any.",
    input: {},
    run: (async (where) => {
      const { status } = await import('../world/status.js')
      return status(where)
    }) as Handler<object>,
  },
  diff: {
    description: 'What changed between two snapshots (b defaults to the workspace), or between two recorded runs up to their first divergence.',
    input: { a: z.string().min(1).describe('a snapshot or a run'), b: z.string().min(1).optional().describe('a snapshot or a run') },
    run: (async (where, { a, b }) => {
      const { isRunSpec, compareRuns } = await import('../trace/diff/compareRuns.js')
      if (isRunSpec(a) && (b === undefined || isRunSpec(b))) return { trace: await compareRuns({ ...where, a, b }) }
      const { diffSnapshots } = await import('../world/diffSnapshots.js')
      return diffSnapshots({ ...where, a, b })
    }) as Handler<{ a: string; b?: string | undefined }>,
  },
  log: {
    description: 'The history from a snapshot (default HEAD), newest first.',
    input: { ref: id.optional(), limit: z.number().int().min(1).optional().describe('at most this many (default 50)') },
    run: (async (where, { ref, limit }) => {
      const { log } = await import('../world/log.js')
      return { entries: await log({ ...where, from: ref ?? 'HEAD', limit: limit ?? 50 }) }
    }) as Handler<{ ref?: string | undefined; limit?: number | undefined }>,
  },
  checkout: {
    description: "Put a snapshot's files in the workspace and move HEAD to it; refuses to overwrite uncommitted changes unless force.",
    input: { id, force: z.boolean().optional().describe('discard uncommitted changes') },
    run: (async (where, { id, force }) => {
      const { checkout } = await import('../world/checkout.js')
      return checkout({ ...where, id, force: force ?? false })
    }) as Handler<{ id: string; force?: boolean | undefined }>,
  },
  branch: {
    description: 'Make a copy-on-write branch of the workspace: try something there, then commit it or abort it.',
    input: { name: branchName, backend: z.enum(['overlay', 'reflink', 'copy', 'auto']).optional() },
    run: (async (where, { name, backend }) => {
      const { makeBranch } = await import('../branch/makeBranch.js')
      return makeBranch({ ...where, name, backend: backend ?? 'auto' })
    }) as Handler<{ name: string; backend?: 'overlay' | 'reflink' | 'copy' | 'auto' | undefined }>,
  },
  commit: {
    description: "Apply a branch to its parent and end it (three-way; a conflict is an error), then send the branch's deferred effects.",
    input: { name: branchName, failIfStale: z.boolean().optional().describe('refuse if a sibling committed first') },
    run: (async (where, { name, failIfStale }) => {
      const { commitNamedWithEffects } = await import('../effects/branchEffects.js')
      return commitNamedWithEffects({ ...where, name, onConflict: failIfStale ? 'fail' : 'merge' })
    }) as Handler<{ name: string; failIfStale?: boolean | undefined }>,
  },
  abort: {
    description: 'End a branch without applying it; its deferred effects are dropped.',
    input: { name: branchName },
    run: (async (where, { name }) => {
      const { abortNamedWithEffects } = await import('../effects/branchEffects.js')
      return abortNamedWithEffects({ ...where, name })
    }) as Handler<{ name: string }>,
  },
  run: {
    description: 'Run a command sandboxed (a branch, or the workspace, at the workspace path; no network unless net is host); returns its exit code, output and changed paths.',
    input: {
      command: z.array(z.string()).min(1).describe('the program and its arguments'),
      branch: branchName.optional(),
      net: z.enum(['none', 'host']).optional(),
      timeout: z.string().optional().describe('e.g. 30s, 5m'),
    },
    run: (async (where, { command, branch, net, timeout }, signal) => {
      const { runWithEffects } = await import('../effects/runWithEffects.js')
      // a client's cancel kills the command's process tree
      return runWithEffects({ ...where, cmd: command, signal, ...(branch ? { branch } : {}), ...(net ? { net } : {}), ...(timeout ? { timeout } : {}) })
    }) as Handler<{ command: string[]; branch?: string | undefined; net?: 'none' | 'host' | undefined; timeout?: string | undefined }>,
  },
  fork: {
    description: 'Make N children of an image, each an image of its own to snapshot on, diff and merge.',
    input: { id: id.optional(), count: z.number().int().min(1).max(1000) },
    run: (async (where, { id, count }) => {
      const { forkImage } = await import('../image/forkImage.js')
      return { children: await forkImage({ ...where, id: id ?? 'HEAD', n: count }) }
    }) as Handler<{ id?: string | undefined; count: number }>,
  },
  merge: {
    description: 'Merge an image into HEAD and the workspace, layer by layer (files three-way); a conflict leaves the merge in progress.',
    input: { from: id },
    run: (async (where, { from }) => {
      const { merge } = await import('../image/merge.js')
      return merge({ ...where, from })
    }) as Handler<{ from: string }>,
  },
  runs: {
    description: 'The recorded runs, newest first.',
    input: { limit: z.number().int().min(1).optional().describe('at most this many (default 20)') },
    run: (async (where, { limit }) => {
      const { listRuns } = await import('../trace/core/listRuns.js')
      return { runs: await listRuns({ ...where, ...(limit ? { limit } : {}) }) }
    }) as Handler<{ limit?: number | undefined }>,
  },
  replay: {
    description: 'Re-execute a recorded run offline, every response served from the recording; an error names the first step that differs.',
    input: { run: z.string().min(1).describe('a run id, unique prefix, or latest') },
    run: (async (where, { run: spec }) => {
      const { loadRun } = await import('../trace/core/loadRun.js')
      const { replayRun } = await import('../trace/replay/replayRun.js')
      const run = await loadRun({ ...where, spec })
      const { replayed: _replayed, agentStdout, ...summary } = await replayRun({ ...where, run, trustCommand: false, stdout: 'capture' })
      return { ...summary, stdout: agentStdout }
    }) as Handler<{ run: string }>,
  },
} as const

export type ToolName = keyof typeof TOOLS
export const TOOL_NAMES = Object.keys(TOOLS) as ToolName[]

/** An MCP server whose tools act on the store `where` locates. */
export function createMcpServer(where: StoreLocator): McpServer {
  const server = new McpServer({ name: 'forkpoint', version: (requirePackage('../../package.json') as { version: string }).version })
  for (const name of TOOL_NAMES) {
    const tool = TOOLS[name]
    server.registerTool(name, { description: tool.description, inputSchema: tool.input }, async (args: unknown, extra: { signal: AbortSignal }) =>
      answer(() => (tool.run as Handler<unknown>)(where, args, extra.signal)),
    )
  }
  return server
}

/** A result as JSON text, or an error as the CLI words it (`isError`, with its code and exit code). */
async function answer(call: () => Promise<object>): Promise<CallToolResult> {
  try {
    return { content: [{ type: 'text', text: JSON.stringify(await call(), null, 2) }] }
  } catch (err) {
    if (!(err instanceof ForkpointError)) throw err
    return {
      isError: true,
      content: [
        { type: 'text', text: `forkpoint: ${err.message}` },
        { type: 'text', text: JSON.stringify(err.toJSON()) },
      ],
    }
  }
}

/**
 * `forkpoint mcp`: serve the tools over stdin/stdout until the client closes stdin; the
 * requests read by then are answered first (a commit or a sandboxed run is not cut off,
 * and a client that writes its requests and closes gets its answers).
 */
export async function serveMcpStdio(where: StoreLocator): Promise<void> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js')
  const server = createMcpServer(where)
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
