import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

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

/** Run a node process to completion and collect its output. */
export function runNode(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
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
  const r = await fp(cwd, ...args, '--json')
  try {
    return { code: r.code, json: JSON.parse(r.stdout) as T, stderr: r.stderr }
  } catch {
    throw new Error(`forkpoint ${args.join(' ')} --json printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`)
  }
}
