import { readFileSync } from 'node:fs'
import { UsageError } from '../../errors/index.js'
import { parseEnvFile, sandboxEnv } from '../../sandbox/sandboxEnv.js'
import type { StoreLocator } from '../../store/findStore.js'
import { Workspace } from '../Workspace.js'
import type { RunOptions, RunResult } from './runInBranch.js'

export interface RunCommandOptions extends RunOptions {
  cmd: string[]
  branch?: string
  /** Names of this process's variables to pass in besides the allowlist (`--env NAME`). */
  passEnv?: string[]
  /** A file of NAME=VALUE lines added to the environment (`--env-file`). */
  envFile?: string
  /** Variables set on top of all that (the effects proxy's). */
  extraEnv?: Record<string, string>
}

/** `Workspace.run` for a workspace named by directory (and a branch by name). @throws {SandboxError} @throws {BranchNotFoundError} @throws {UsageError} an unreadable env file */
export async function runCommand({ cmd, branch, dir, store, passEnv, envFile, extraEnv, ...options }: StoreLocator & RunCommandOptions): Promise<RunResult> {
  const ws = await Workspace.open({ dir, store })
  const env = { ...(options.env ?? { ...sandboxEnv(process.env, passEnv), ...(envFile ? parseEnvFile(readEnvFile(envFile)) : {}) }), ...extraEnv }
  return ws.run(cmd, { ...options, env, ...(branch ? { branch } : {}) })
}

function readEnvFile(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read the env file ${file}: ${(err as Error).message}`, { file })
  }
}
