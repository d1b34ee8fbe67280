import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { CLI, type CliResult, runCli } from '../helpers/cli.js'

export { CLI }
export const FIXTURES = resolve(import.meta.dirname, 'fixtures')

/** `forkpoint ARGS` in `cwd` with extra environment (async, so servers in this process keep answering). */
export function fp(args: string[], { cwd, env = {} }: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  const defined = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
  return runCli(args, { cwd, env: defined })
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
