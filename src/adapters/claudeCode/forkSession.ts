import { spawn } from 'node:child_process'
import { accessSync, constants, promises as fs } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, join } from 'node:path'
import { InputNotFoundError, UsageError } from '../../errors/index.js'
import { forkImage } from '../../image/forkImage.js'
import type { Digest } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { readRef } from '../../store/refs.js'
import { FORK_BRANCH_ENV } from './hookEnv.js'
import { sessionRef } from './sessionRef.js'

export interface ForkClaudeSessionArgs extends StoreLocator {
  /** The session to fork (its id, as the hooks saw it). */
  session: string
  n: number
  /** Start each fork headless with this prompt; without it the forks are made and `command` says how to start each. */
  prompt?: string
  /** The Claude Code binary (default `claude`). */
  claude?: string
  /** More arguments for each session (`--allowedTools Write`, `--model ...`). */
  args?: string[]
  /** The environment the sessions start with; where `CLAUDE_CONFIG_DIR`, `HOME` and `PATH` are looked up (`process.env` from the CLI). */
  env: NodeJS.ProcessEnv
}

export interface ClaudeFork {
  index: number
  /** The fork's image (`refs/forks/<id>/<index>`); the hooks of its session add to it. */
  image: Digest
  /** Its copy-on-write branch: the session's files, where the fork's session runs. */
  branch: { name: string; path: string }
  /** What starts the fork's session (run it in `branch.path`, with `FORKPOINT_CLAUDE_BRANCH` set to `branch.name`). */
  command: string[]
  /** With a prompt: how the session ended, and its new session id. */
  ended?: { exitCode: number | null; sessionId: string | null; result: string | null; stderr: string }
}

/** Claude Code session ids are UUIDs; anything else could name a path out of its projects folder. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9-]*$/

/**
 * Start N sessions from one image of a Claude Code session: fork the session's latest
 * image into N children, each with a copy-on-write branch of its files; give each branch
 * the session's transcript where Claude Code looks for it; and, with a prompt, run
 * `claude --resume SESSION --fork-session -p PROMPT` in every branch at once. Each fork's
 * hooks snapshot its branch onto its own image; `forkpoint commit fork-<id>-<i>` takes a
 * winner's files home, `forkpoint abort` drops the others.
 * @throws {UsageError} no images of that session here, or a bad session id or n
 * @throws {InputNotFoundError} the session's transcript is not where Claude Code keeps it
 */
export async function forkClaudeSession(args: ForkClaudeSessionArgs): Promise<ClaudeFork[]> {
  const { session, n, prompt, claude = 'claude', env } = args
  if (!SESSION_ID.test(session)) throw new UsageError(`a Claude Code session id is letters, digits and '-' (got ${JSON.stringify(session)})`, { field: 'session' })
  const { store, workspace } = await openStore(args)
  const image = await readRef(store, sessionRef(session))
  if (!image) throw new UsageError(`no images of Claude Code session ${session} here: were the hooks installed ('forkpoint claude install') when it ran?`, { field: 'session' })
  const projects = join(env['CLAUDE_CONFIG_DIR'] ?? join(env['HOME'] ?? homedir(), '.claude'), 'projects')
  const transcript = join(projects, projectKey(workspace), `${session}.jsonl`)
  const text = await fs.readFile(transcript).catch(() => {
    throw new InputNotFoundError(`the transcript of session ${session} is not at ${transcript}; fork it from the machine and HOME it ran in`, { path: transcript })
  })
  if (prompt !== undefined) assertRunnable(claude, env)
  const children = await forkImage({ store, id: image, n, materialize: true, persistent: true, env })
  const forks = await Promise.all(
    children.map(async (child): Promise<ClaudeFork> => {
      const branch = child.branch!
      const into = join(projects, projectKey(branch.path))
      await fs.mkdir(into, { recursive: true })
      await fs.writeFile(join(into, `${session}.jsonl`), text)
      const command = [claude, '--resume', session, '--fork-session', ...(prompt === undefined ? [] : ['-p', prompt, '--output-format', 'json']), ...(args.args ?? [])]
      return { index: child.index, image: child.id, branch, command }
    }),
  )
  if (prompt === undefined) return forks
  // the forks' hooks must find this store, wherever it is
  const forkEnv = { ...env, FORKPOINT_STORE: store.root }
  return Promise.all(forks.map(async (fork) => ({ ...fork, ended: await runSession(fork, forkEnv) })))
}

/** Refuse before any fork is made when the Claude Code binary is not there to run. @throws {InputNotFoundError} */
function assertRunnable(program: string, env: NodeJS.ProcessEnv): void {
  const candidates = program.includes('/') ? [program] : (env['PATH'] ?? '').split(delimiter).map((dir) => join(dir, program))
  const found = candidates.some((path) => {
    try {
      accessSync(path, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
  if (!found)
    throw new InputNotFoundError(`cannot run ${program}: no such program${program.includes('/') ? '' : ' on PATH'} (--claude BIN names Claude Code's binary)`, { path: program })
}

/** Where Claude Code keeps the sessions of a working directory: its path with every other character than a letter or digit as '-' (Claude Code shortens keys over 200 characters, so a workspace path must stay under about 150). */
function projectKey(dir: string): string {
  return dir.replace(/[^A-Za-z0-9]/g, '-')
}

function runSession(fork: ClaudeFork, env: NodeJS.ProcessEnv): Promise<NonNullable<ClaudeFork['ended']>> {
  return new Promise((resolve) => {
    const [program, ...rest] = fork.command
    const child = spawn(program!, rest, { cwd: fork.branch.path, env: { ...env, [FORK_BRANCH_ENV]: fork.branch.name }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    // a session that cannot start is its fork's outcome, not an error that would hide the branches already made
    child.on('error', (err) => resolve({ exitCode: null, sessionId: null, result: null, stderr: err.message }))
    child.on('close', (exitCode) => {
      const summary = parseSummary(stdout)
      resolve({ exitCode, sessionId: summary?.session_id ?? null, result: summary?.result ?? null, stderr })
    })
  })
}

function parseSummary(stdout: string): { session_id?: string; result?: string } | null {
  try {
    return JSON.parse(stdout) as { session_id?: string; result?: string }
  } catch {
    return null
  }
}
