import type { ProcessId } from './processId.js'
import { type SharedHolder, sharedHolder, startHolder } from './namespaceHolder.js'
import { type SandboxResult, type SandboxSpec, runSandboxed } from './runSandboxed.js'

/**
 * What branches and runs need of the sandbox runtime, in one interface: the native one
 * (native/sandbox.c) by default, a fake in tests of branch logic (`useSandboxRuntime`).
 */
export interface SandboxRuntime {
  /** Run a command isolated (see `runSandboxed`). */
  run(spec: SandboxSpec): Promise<SandboxResult>
  /** This process's shared namespace holder, which mounts and unmounts overlays on request. */
  sharedHolder(): Promise<Pick<SharedHolder, 'id' | 'request'>>
  /** A persistent holder with these overlays (`[options, target]`) mounted, recorded in `pidFile`. */
  startHolder(mounts: Array<[string, string]>, pidFile: string): Promise<ProcessId>
}

export const nativeRuntime: SandboxRuntime = { run: runSandboxed, sharedHolder, startHolder }

let current: SandboxRuntime = nativeRuntime

export function sandboxRuntime(): SandboxRuntime {
  return current
}

/** Use `runtime` from now on; returns a function that puts the previous one back. */
export function useSandboxRuntime(runtime: SandboxRuntime): () => void {
  const previous = current
  current = runtime
  return () => {
    current = previous
  }
}
