import { promises as fs } from 'node:fs'
import { BranchBusyError } from '../../errors/index.js'
import { isAlive, self } from '../../sandbox/processId.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { runningSandboxes } from '../run/runningSandboxes.js'
import type { BranchState } from '../types.js'
import { liveDir } from './branchStore.js'
import { processId } from './stateFile.js'

/**
 * A commit or an abort reads and removes a branch's files: a sandboxed command still running in it could swap a
 * directory for a symlink under the walk and have the host copy or remove what the link points at. So the two
 * never overlap: a commit or abort marks the branch (`closing`, with its process) and then looks for a command
 * running in it; a run notes itself (runningSandboxes.ts) and then looks for a mark. Each writes before it looks,
 * so of two that start together at least one sees the other and refuses. A mark whose process died is no mark.
 */
const markPath = (store: Store, state: BranchState) => liveDir(store, state.id, 'closing')

export interface ClosingMark {
  /** Take the mark away: the branch lives on (a conflict, a failure). */
  clear(): Promise<void>
}

/**
 * Mark `state` as being committed or aborted by this process.
 * @throws {BranchBusyError} a sandboxed command is running in it (nothing marked)
 */
export async function markClosing(store: Store, state: BranchState, doing: 'commit' | 'abort'): Promise<ClosingMark> {
  const path = markPath(store, state)
  await atomicWrite(path, JSON.stringify(self))
  const clear = () => fs.rm(path, { force: true })
  const runs = (await runningSandboxes(store)).filter((run) => run.branch === state.name)
  if (runs.length > 0) {
    await clear()
    throw new BranchBusyError(`cannot ${doing} branch ${state.name}: a command is running in it (pid ${runs[0]!.owner.pid}): wait until it ends`, {
      name: state.name,
      children: [],
      runs: runs.length,
    })
  }
  return { clear }
}

/** @throws {BranchBusyError} `state` is being committed or aborted by a process that is alive */
export function assertNotClosing(store: Store, state: BranchState): void {
  const text = readStateTextOrNull(markPath(store, state))
  if (text === null) return
  let holder: unknown = null
  try {
    holder = JSON.parse(text)
  } catch {
    // a torn or planted mark holds no process: no mark
  }
  const parsed = processId.safeParse(holder)
  if (parsed.success && isAlive(parsed.data))
    throw new BranchBusyError(`cannot run in branch ${state.name}: it is being committed or aborted (pid ${parsed.data.pid})`, { name: state.name, children: [], runs: 0 })
}
