import { request } from 'node:http'
import { IN_PROCESS_ENV, MAX_HOOK_INPUT } from '../adapters/claudeCode/hookEnv.js'
import { CLAUDE_HOOK_PATH, MAX_HOOK_REQUEST, WORKSPACE_HEADER } from '../service/serviceNames.js'
import { serviceSocket } from '../service/serviceSocket.js'
import { readServiceToken } from '../service/serviceToken.js'
import { locateStore } from '../store/locateStore.js'

// `forkpoint claude hook`, which Claude Code runs at every tool call: a client of the store's
// running service, which does the hook's work. It loads Node's own modules and a few names
// only; the hook's code loads when no service answers.

/** The service's refusals that leave the hook to its own process: a token it wants, no such endpoint (an older service), read-only (`forkpoint ui`), another workspace. */
const NOT_FOR_THE_SERVICE = new Set([401, 404, 405, 421])

/** A socket no service listens on (one that died): the hook runs in its own process. */
const NOBODY_LISTENS = new Set(['ECONNREFUSED', 'ENOENT'])

/**
 * The hook: its input read from stdin and sent to the store's service, or given to
 * `inProcess` when no service answers it (none running, one of another workspace, the
 * hook of a fork's branch or of a recording, an input that is not JSON). Every failure is
 * exit 1 with one line on stderr, never 2: Claude Code takes a hook's exit 2 as "block
 * this tool call", and a snapshot that could not be made must not stop the agent.
 */
export async function runClaudeHook(inProcess: (text: string) => Promise<void>): Promise<void> {
  try {
    const text = await readStdin()
    const answered = await askService(text, process.env)
    if (!answered) await inProcess(text)
  } catch (err) {
    hookFailed((err as Error).message)
  }
}

/** What a hook that could not do its work says: one line, exit 1. */
export function hookFailed(message: string): void {
  process.stderr.write(`forkpoint claude hook: ${message}\n`)
  process.exitCode = 1
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_HOOK_INPUT) throw new Error(`the hook input is over ${MAX_HOOK_INPUT} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/**
 * Whether the store's service answered the hook; its failure, one line and exit 1.
 * @throws {Error} the service went away while it answered
 */
async function askService(text: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  const call = await serviceCall(text, env)
  const answer = call && (await post(call))
  if (!answer || NOT_FOR_THE_SERVICE.has(answer.status)) return false
  if (answer.status !== 200) hookFailed(failureOf(answer))
  return true
}

interface ServiceCall {
  socketPath: string
  headers: Record<string, string>
  body: string
}

/** The request for the service of the event's store, or null when the hook is not one to send or no service of this user's is there. */
async function serviceCall(text: string, env: NodeJS.ProcessEnv): Promise<ServiceCall | null> {
  if (IN_PROCESS_ENV.some((name) => env[name])) return null
  const cwd = eventDirectory(text)
  const location = cwd === null ? null : locateStore({ dir: cwd, store: env['FORKPOINT_STORE'] || undefined })
  if (!location) return null
  const socketPath = serviceSocket(location.storeDir)
  if (!socketPath) return null
  // the input goes as it came, valid JSON already: a large tool response is not encoded again
  const body = `{"env":${JSON.stringify(env)},"event":${text}}`
  if (Buffer.byteLength(body) > MAX_HOOK_REQUEST) return null
  const token = await readServiceToken(location.storeDir)
  const headers = { 'content-type': 'application/json', [WORKSPACE_HEADER]: encodeURIComponent(location.workspace), ...(token ? { authorization: `Bearer ${token}` } : {}) }
  return { socketPath, headers, body }
}

/** The `cwd` of a hook's input, or null for an input the hook's own code is to refuse (not JSON, no cwd). */
function eventDirectory(text: string): string | null {
  try {
    const cwd = (JSON.parse(text) as { cwd?: unknown } | null)?.cwd
    return typeof cwd === 'string' && cwd !== '' ? cwd : null
  } catch {
    return null
  }
}

/** The service's answer, or null when nothing listens on the socket. */
function post({ socketPath, headers, body }: ServiceCall): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: 'POST', path: CLAUDE_HOOK_PATH, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      res.on('error', reject)
    })
    req.on('error', (err: NodeJS.ErrnoException) => (NOBODY_LISTENS.has(err.code ?? '') ? resolve(null) : reject(new Error(`the store's service: ${err.message}`))))
    req.end(body)
  })
}

/** The message of the service's failure answer. */
function failureOf(answer: { status: number; body: string }): string {
  try {
    const message = (JSON.parse(answer.body) as { error?: { message?: unknown } }).error?.message
    if (typeof message === 'string') return message
  } catch {
    // not an answer of the service's: said by its status below
  }
  return `the store's service answered ${answer.status}`
}
