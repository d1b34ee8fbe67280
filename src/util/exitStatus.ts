import { constants } from 'node:os'

/**
 * A child's exit status as a shell reports it: its exit code, or 128 + N when signal N
 * ended it. The one signal-number table is the kernel's, through `os.constants.signals`.
 */
export function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  return code ?? 128 + (signal ? constants.signals[signal] : 0)
}
