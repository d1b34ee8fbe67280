import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'

export const CLI = resolve(import.meta.dirname, '../../dist/cli/main.js')
export const FIXTURES = resolve(import.meta.dirname, 'fixtures')

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** Run the built CLI as a user would (async, so servers in this process keep answering). */
export function fp(args: string[], { cwd, env = {} }: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }))
  })
}

/** Every file under `dir` (store objects, runs.db and its WAL, artifacts), for byte-level searches. */
export function allFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const st = statSync(path)
    if (st.isDirectory()) out.push(...allFiles(path))
    else if (st.isFile()) out.push(path)
  }
  return out
}

/** Files under `dir` whose bytes contain `needle` anywhere (as UTF-8, and base64 of it too). */
export function filesContaining(dir: string, needle: string): string[] {
  const forms = [Buffer.from(needle), Buffer.from(Buffer.from(needle).toString('base64').replace(/=+$/, ''))]
  return allFiles(dir).filter((f) => {
    const bytes = readFileSync(f)
    return forms.some((form) => bytes.includes(form))
  })
}
