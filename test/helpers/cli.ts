import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { format } from 'node:util'

/** The `forkpoint` command (package.json's bin); end-to-end tests run it exactly as a user would (after `npm run build`). */
export const CLI = fileURLToPath(new URL('../../bin/forkpoint', import.meta.url))
/** The repository's root. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The CLI bundle, which bin/forkpoint runs. */
const ENTRY = join(ROOT, 'dist', 'cli', 'main.cjs')
/** The built library, for helper processes that drive it directly. */
export const LIB = fileURLToPath(new URL('../../dist/index.js', import.meta.url))

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

function assertBuilt(): void {
  if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run 'npm run build' before the CLI tests`)
}

/** A clean environment: no inherited store, no colours, no npm-injected variables (the choice of lstat passes through). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'], HOME: process.env['HOME'], NO_COLOR: '1', ...extra }
  // the node-lstat test project (vitest.config.ts) runs the commands with Node's lstat too
  if (process.env['FORKPOINT_NATIVE'] !== undefined && extra['FORKPOINT_NATIVE'] === undefined) env['FORKPOINT_NATIVE'] = process.env['FORKPOINT_NATIVE']
  return env
}

/** Run any program to completion and collect its output, in the environment the CLI tests use. */
export function runProgram(argv: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return run(argv[0]!, argv.slice(1), options)
}

/** Run a node process to completion and collect its output (with `input`, that on its stdin). */
export function runNode(args: string[], options: { cwd: string; env?: Record<string, string>; input?: string }): Promise<CliResult> {
  return run(process.execPath, args, options)
}

/** `forkpoint ARGS` with extra environment (and, with `input`, that on its stdin). */
export function runCli(args: string[], options: { cwd: string; env?: Record<string, string>; input?: string }): Promise<CliResult> {
  return run(CLI, args, options)
}

function run(file: string, args: string[], { cwd, env, input }: { cwd: string; env?: Record<string, string>; input?: string }): Promise<CliResult> {
  assertBuilt()
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, env: cleanEnv(env), stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] })
    child.stdin?.end(input)
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

/** `forkpoint ARGS` in `cwd`. */
export function fp(cwd: string, ...args: string[]): Promise<CliResult> {
  return runCli(args, { cwd })
}

/** `forkpoint ARGS --json` in `cwd`, stdout parsed (throws with the output when it does not parse). */
export async function fpJson<T = Record<string, unknown>>(cwd: string, ...args: string[]): Promise<{ code: number; json: T; stderr: string }> {
  return parsedJson<T>(args, await fp(cwd, ...args, '--json'))
}

/** `fpJson`, in this process (`runCliInProcess`). */
export async function fpJsonInProcess<T = Record<string, unknown>>(cwd: string, ...args: string[]): Promise<{ code: number; json: T; stderr: string }> {
  return parsedJson<T>(args, await fpInProcess(cwd, ...args, '--json'))
}

function parsedJson<T>(args: string[], r: CliResult): { code: number; json: T; stderr: string } {
  try {
    return { code: r.code, json: JSON.parse(r.stdout) as T, stderr: r.stderr }
  } catch {
    throw new Error(`forkpoint ${args.join(' ')} --json printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`)
  }
}

/** The calls of `runCliInProcess` waiting for the one before them: each takes over the process's directory and output. */
let inProcessQueue: Promise<unknown> = Promise.resolve()

/**
 * `forkpoint ARGS` in this test process: the CLI's `main(argv)` as bin/forkpoint calls it, parsing, output and
 * exit code alike, without a Node start and a bundle load per call. Like a child, it starts in `cwd` with the
 * clean environment and leaves the process's directory, environment and exit code as it found them; its
 * stdout and stderr are collected. Calls run one at a time; no stdin. One spawned test per command
 * (test/cli/commands.test.ts) covers the path through bin/forkpoint.
 */
export function runCliInProcess(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  const result = inProcessQueue.then(() => runMain(args, options))
  inProcessQueue = result.catch(() => undefined)
  return result
}

/** `forkpoint ARGS` in `cwd`, in this process (`runCliInProcess`). */
export function fpInProcess(cwd: string, ...args: string[]): Promise<CliResult> {
  return runCliInProcess(args, { cwd })
}

async function runMain(args: string[], { cwd, env }: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  const { main } = await import('../../src/cli/program.js')
  const output = { stdout: '', stderr: '' }
  const restore = [enterCwd(cwd), useEnv(cleanEnv(env)), captureOutput(output), keepExitCode()]
  try {
    const code = await main([process.execPath, CLI, ...args])
    return { code, ...output }
  } finally {
    for (const undo of restore.reverse()) undo()
  }
}

function enterCwd(cwd: string): () => void {
  const before = process.cwd()
  process.chdir(cwd)
  return () => process.chdir(before)
}

/** Replace the environment's variables (the object stays: Node and vitest hold it). */
function useEnv(env: NodeJS.ProcessEnv): () => void {
  const before = { ...process.env }
  const replace = (vars: NodeJS.ProcessEnv) => {
    for (const key of Object.keys(process.env)) delete process.env[key]
    for (const [key, value] of Object.entries(vars)) if (value !== undefined) process.env[key] = value
  }
  replace(env)
  return () => replace(before)
}

function keepExitCode(): () => void {
  const before = process.exitCode
  process.exitCode = undefined
  return () => (process.exitCode = before)
}

/** Collect what is written to stdout and stderr, console's writes too (vitest routes console elsewhere). */
function captureOutput(output: { stdout: string; stderr: string }): () => void {
  const undo = [replaceWrite(process.stdout, output, 'stdout'), replaceWrite(process.stderr, output, 'stderr')]
  const consoleWrites = { log: console.log, info: console.info, warn: console.warn, error: console.error }
  const line =
    (into: 'stdout' | 'stderr') =>
    (...args: unknown[]) =>
      void (output[into] += `${format(...args)}\n`)
  Object.assign(console, { log: line('stdout'), info: line('stdout'), warn: line('stderr'), error: line('stderr') })
  return () => {
    for (const restore of undo) restore()
    Object.assign(console, consoleWrites)
  }
}

/** Make `stream.write` append to `output[into]`; returns what puts its own write back. */
function replaceWrite(stream: NodeJS.WriteStream, output: { stdout: string; stderr: string }, into: 'stdout' | 'stderr'): () => void {
  const own = Object.getOwnPropertyDescriptor(stream, 'write')
  const write = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    output[into] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
    const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined
    done?.()
    return true
  }
  Object.defineProperty(stream, 'write', { value: write, configurable: true, writable: true })
  return () => (own ? Object.defineProperty(stream, 'write', own) : Reflect.deleteProperty(stream, 'write'))
}
