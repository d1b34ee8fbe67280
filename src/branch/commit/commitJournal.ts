import { promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { z } from 'zod'
import type { Store } from '../../store/Store.js'
import { errnoCode } from '../../util/fsx.js'
import { readMarkedStateOrNull } from '../../store/readStateFile.js'
import { NOT_WRITTEN_HERE, writeMarkedState } from '../../store/writtenHere.js'
import { liveDir, writeGeneration } from '../lifecycle/branchStore.js'
import { fsPath } from '../../util/fsName.js'
import { removeTree } from '../lifecycle/removeTree.js'
import { BRANCH_ID, processId, refuse } from '../lifecycle/stateFile.js'
import { WorkspacePathSchema } from '../../world/merge/progressSchemas.js'
import { assertNoLinkedAncestor } from '../../world/checkout/safePath.js'

/**
 * A commit is written down before it touches the parent. `staging`: temp copies are being
 * made next to their targets (a crash rolls back: the temps are removed). `applying`:
 * every temp is whole, and each step below can run again without harm (a crash rolls
 * forward). The journal goes away with the branch directory once the branch is torn down.
 * It names paths inside the parent only; each temp's place is derived from its path and the
 * branch's id (`stagedPath`), never read: a planted journal must not move or remove a file
 * anywhere else. Only the file written here is acted on (`writtenHere.ts`): a journal a cloned
 * repository carries could otherwise place a `.git` directory of its own in the parent.
 */
const CommitJournalSchema = z.strictObject({
  kind: z.literal('commit-journal'),
  schemaVersion: z.literal(1),
  phase: z.enum(['staging', 'applying']),
  branch: z.string().regex(BRANCH_ID),
  parent: z.string().regex(BRANCH_ID).nullable(),
  /** The committing process: only once it is dead may another process finish or undo its commit. */
  committer: processId,
  /** The parent's commit count once this commit is in. */
  generation: z.int().positive(),
  ops: z.array(z.strictObject({ type: z.enum(['put', 'delete']), path: WorkspacePathSchema })),
})
export type CommitJournal = z.infer<typeof CommitJournalSchema>
export type CommitOp = CommitJournal['ops'][number]

const journalPath = (store: Store, id: string): string => liveDir(store, id, 'commit.json')

export async function writeCommitJournal(store: Store, journal: CommitJournal): Promise<void> {
  await writeMarkedState(journalPath(store, journal.branch), journal, { fsync: journal.phase === 'applying' })
}

/**
 * Branch `id`'s commit journal, or null when it has none.
 * @throws {BranchStateError} a journal forkpoint would not write: a path outside the parent, another branch's, any other field; or one not written here
 */
export async function readCommitJournal(store: Store, id: string): Promise<CommitJournal | null> {
  const file = journalPath(store, id)
  const read = readMarkedStateOrNull(file)
  if (read === null) return null
  if (read.value === null) refuse(id, file, `its commit journal is not one forkpoint wrote: ${NOT_WRITTEN_HERE}, or it does not parse`)
  const parsed = CommitJournalSchema.safeParse(read.value)
  if (!parsed.success)
    refuse(id, file, `its commit journal is not one forkpoint writes: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'the file'}: ${i.message}`).join('; ')}`)
  if (parsed.data.branch !== id) refuse(id, file, `its commit journal names branch ${parsed.data.branch}`)
  return parsed.data
}

/**
 * Where branch `branch`'s commit stages `path` (`new`), and moves aside what was there when a directory is replaced
 * (`old`): next to it, on the same file system, so it can be renamed into place.
 */
export function stagedPath(path: string, tag: 'new' | 'old', branch: string): string {
  return join(dirname(path), `.${basename(path)}.fp-${tag}-${branch}`)
}

/** Put every staged path in place and delete what the branch deleted; idempotent. */
export async function applyCommit(store: Store, root: string, journal: CommitJournal): Promise<void> {
  for (const op of journal.ops) {
    assertNoLinkedAncestor(root, op.path)
    const target = join(root, op.path)
    if (op.type === 'delete') await removeTree(target)
    else await place(join(root, stagedPath(op.path, 'new', journal.branch)), target, join(root, stagedPath(op.path, 'old', journal.branch)))
  }
  await writeGeneration(store, journal.parent, journal.generation)
}

async function place(temp: string, target: string, aside: string): Promise<void> {
  try {
    await fs.rename(fsPath(temp), fsPath(target))
  } catch (err) {
    const code = errnoCode(err)
    if (code === 'ENOENT') return // placed before a crash
    if (!['EISDIR', 'ENOTDIR', 'ENOTEMPTY', 'EEXIST'].includes(code ?? '')) throw err
    // A directory is replaced by a file or another directory: move the old one aside first.
    await fs.rename(fsPath(target), fsPath(aside))
    await fs.rename(fsPath(temp), fsPath(target))
  }
  await removeTree(aside)
}

/** Remove the temps of a commit interrupted while staging. */
export async function rollBackCommit(root: string, journal: CommitJournal): Promise<void> {
  for (const op of journal.ops) {
    if (op.type !== 'put') continue
    assertNoLinkedAncestor(root, op.path)
    await removeTree(join(root, stagedPath(op.path, 'new', journal.branch)))
  }
}
