import { type WorkspaceRef, openWorkspace } from './openWorkspace.js'
import type { RunOptions, RunResult } from './runInBranch.js'

/** `Workspace.run` for a workspace named by directory (and a branch by name). @throws {SandboxError} @throws {BranchNotFoundError} */
export async function runCommand({ cmd, branch, dir, store, ...options }: WorkspaceRef & RunOptions & { cmd: string[]; branch?: string }): Promise<RunResult> {
  const ws = await openWorkspace({ dir, store })
  return ws.run(cmd, { ...options, ...(branch ? { branch } : {}) })
}
