import { spawn } from 'node:child_process'
import { once } from 'node:events'

/** The tools forkpoint runs on files a command left, by absolute path and with a fixed PATH: never a program of its making. */
const TOOLS_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }

export interface ToolOutcome {
  status: number | null
  /** What it wrote to stderr, trimmed. */
  stderr: string
}

/**
 * Run a system tool on descriptors forkpoint opened (`stdin`, `stdout`: file descriptors or
 * 'ignore'), so the files it works on are never named by a path: a name that is not UTF-8
 * or a path past PATH_MAX reaches it as it is. Resolves when it has exited.
 */
export async function runTool(argv: readonly [string, ...string[]], stdin: number, stdout: number | 'ignore'): Promise<ToolOutcome> {
  const child = spawn(argv[0], argv.slice(1), { stdio: [stdin, stdout, 'pipe'], env: TOOLS_ENV })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const [status] = (await once(child, 'close')) as [number | null]
  return { status, stderr: stderr.trim() }
}

/** A tool's complaint (its last line, of at most 300 characters: one may name a path of any length), or its exit status when it said nothing. */
export function toolComplaint({ status, stderr }: ToolOutcome): string {
  const last = stderr.split('\n').at(-1) ?? ''
  return last === '' ? `exit ${status}` : last.length > 300 ? `...${last.slice(-300)}` : last
}
