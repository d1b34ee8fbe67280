import { type Command, Option } from 'commander'
import type { NetMode } from '../sandbox/runSandboxed.js'

/** The flags `speculate` and `explore` share. */
export interface PatternFlags {
  timeout?: string
  parallel?: string
  net?: NetMode
  isolate?: boolean
}

export function withPatternOptions(cmd: Command): Command {
  return cmd
    .option('--timeout <duration>', 'wall-clock limit per candidate, e.g. 60s, 500ms, 2m')
    .option('--parallel <k>', 'candidates running at once (default: number of cores)')
    .addOption(new Option('--net <mode>', 'network inside the sandboxes').choices(['none', 'host']).default('none'))
    .option('--no-isolate', 'run the commands as plain processes in the branch directories, without a sandbox')
}

export function patternFlags(opts: PatternFlags): { timeout?: string; maxParallel?: number; net?: NetMode; isolate?: boolean } {
  return {
    ...(opts.timeout ? { timeout: opts.timeout } : {}),
    ...(opts.parallel ? { maxParallel: Number(opts.parallel) } : {}),
    ...(opts.net ? { net: opts.net } : {}),
    ...(opts.isolate === undefined ? {} : { isolate: opts.isolate }),
  }
}

/** Ctrl-C / SIGTERM cancel the pattern (candidates killed, branches aborted) instead of killing forkpoint mid-way. */
export async function cancelOnSignals<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const cancel = () => controller.abort()
  process.once('SIGINT', cancel)
  process.once('SIGTERM', cancel)
  try {
    return await fn(controller.signal)
  } finally {
    process.off('SIGINT', cancel)
    process.off('SIGTERM', cancel)
  }
}
