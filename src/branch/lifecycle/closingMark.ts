import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { z } from 'zod'
import { BranchBusyError } from '../../errors/index.js'
import { isAlive, self } from '../../sandbox/processId.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { runningSandboxes } from '../run/runningSandboxes.js'
import type { BranchState } from '../types.js'
import { liveDir } from './branchStore.js'
import { processId } from './stateFile.js'
import { parseJsonOrNull } from '../../util/parseJsonOrNull.js'

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
  const mark = { owner: self, token: randomBytes(8).toString('hex') }
  await atomicWrite(path, JSON.stringify(mark))
  // only its own: another commit or abort may have marked the branch since
  const clear = async () => {
    if (readMark(store, state)?.token === mark.token) await fs.rm(path, { force: true })
  }
  try {
    await assertNoRunIn(store, state, doing)
  } catch (err) {
    await clear()
    throw err
  }
  return { clear }
}

/** @throws {BranchBusyError} a sandboxed command is running in `state` */
export async function assertNoRunIn(store: Store, state: BranchState, doing: 'commit' | 'abort'): Promise<void> {
  const runs = (await runningSandboxes(store)).filter((run) => run.branch === state.name)
  if (runs.length === 0) return
  throw new BranchBusyError(`cannot ${doing} branch ${state.name}: a command is running in it (pid ${runs[0]!.owner.pid}): wait until it ends`, {
    name: state.name,
    children: [],
    runs: runs.length,
  })
}

/** @throws {BranchBusyError} `state` is being committed or aborted by a process that is alive */
export function assertNotClosing(store: Store, state: BranchState): void {
  const mark = readMark(store, state)
  if (mark && isAlive(mark.owner))
    throw new BranchBusyError(`cannot run in branch ${state.name}: it is being committed or aborted (pid ${mark.owner.pid})`, { name: state.name, children: [], runs: 0 })
}

const MarkSchema = z.strictObject({ owner: processId, token: z.string().regex(/^[0-9a-f]{16}$/) })

/** The branch's mark, or null when there is none; a torn or planted one is none. */
function readMark(store: Store, state: BranchState): z.infer<typeof MarkSchema> | null {
  const text = readStateTextOrNull(markPath(store, state))
  if (text === null) return null
  const parsed = MarkSchema.safeParse(parseJsonOrNull(text))
  return parsed.success ? parsed.data : null
}
