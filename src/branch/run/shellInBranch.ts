import { existsSync } from 'node:fs'
import type { EgressProxy, NetMode } from '../../sandbox/runSandboxed.js'
import { sandboxEnv } from '../../sandbox/sandboxEnv.js'
import type { StoreLocator } from '../../store/findStore.js'
import { Workspace } from '../Workspace.js'

/**
 * A shell in a live branch on this process's own terminal, sandboxed as `run --branch`
 * runs (the branch at the workspace's own path), so tools work in it wherever the branch
 * cannot be mounted where they see it. `command` runs with `sh -c` instead; no time limit.
 * Returns the shell's exit code, and where the sandbox was weaker than promised (`warnings`).
 * @throws {BranchNotFoundError} @throws {SandboxError}
 */
export async function shellInBranch({
  branch,
  command,
  net,
  passEnv,
  ...ref
}: StoreLocator & { branch: string; command?: string; net?: NetMode | EgressProxy; passEnv?: string[] }): Promise<{ exitCode: number; warnings: string[] }> {
  const ws = await Workspace.open(ref)
  const argv = command === undefined ? [existsSync('/bin/bash') ? 'bash' : 'sh', '-i'] : ['sh', '-c', command]
  const result = await ws.run(argv, { branch, env: sandboxEnv(process.env, passEnv), stdio: 'inherit', timeout: 0, ...(net ? { net } : {}) })
  return { exitCode: result.exitCode, warnings: result.warnings }
}
