import { UsageError } from '../../errors/index.js'
import type { ExecResult } from '../qemu/GuestChannel.js'

/** Runs a script in the guest (`withRunningAgent`). */
export type GuestRun = (script: string) => Promise<ExecResult>

/** Run a step of a copy in the guest; one that fails (no such folder, no room, read-only) is refused with the guest's words (exit 2). */
export async function guestStep(run: GuestRun, machine: string, script: string, what: string): Promise<string> {
  const r = await run(script)
  if (r.exitCode !== 0) throw new UsageError(`machine ${machine}: cannot ${what}: ${r.stderr.trim() || `exit ${r.exitCode}`}`, { value: machine })
  return r.stdout
}

/** A temp name beside `path`, for a file written whole and then renamed into place. */
export const besideName = (name: string, nonce: string): string => `.${name}.forkpoint-${nonce}`
