import { promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { errnoCode } from '../../util/fsx.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import { liveDir, writeGeneration } from '../lifecycle/branchStore.js'
import { fsPath } from '../../util/fsName.js'
import { removeTree } from '../lifecycle/removeTree.js'
import type { ProcessId } from '../types.js'

/**
 * A commit is written down before it touches the parent. `staging`: temp copies are being
 * made next to their targets (a crash rolls back: the temps are removed). `applying`:
 * every temp is whole, and each step below can run again without harm (a crash rolls
 * forward). The journal goes away with the branch directory once the branch is torn down.
 */
export type CommitOp = { type: 'put'; path: string; temp: string; aside: string } | { type: 'delete'; path: string }

export interface CommitJournal {
  kind: 'commit-journal'
  schemaVersion: 1
  phase: 'staging' | 'applying'
  branch: string
  parent: string | null
  /** The committing process: only once it is dead may another process finish or undo its commit. */
  committer: ProcessId
  /** The parent's commit count once this commit is in. */
  generation: number
  ops: CommitOp[]
}

const journalPath = (store: Store, id: string): string => liveDir(store, id, 'commit.json')

export async function writeCommitJournal(store: Store, journal: CommitJournal): Promise<void> {
  await atomicWrite(journalPath(store, journal.branch), JSON.stringify(journal), { fsync: journal.phase === 'applying' })
}

export async function readCommitJournal(store: Store, id: string): Promise<CommitJournal | null> {
  const text = readStateTextOrNull(journalPath(store, id))
  if (text === null) return null
  try {
    return JSON.parse(text) as CommitJournal
  } catch {
    return null // torn while being written: nothing was applied yet
  }
}

/** A temp path next to `path` inside `root`, on the same file system, so it can be renamed into place. */
export function sibling(path: string, tag: string, id: string): string {
  return join(dirname(path), `.${basename(path)}.fp-${tag}-${id}`)
}

/** Put every staged path in place and delete what the branch deleted; idempotent. */
export async function applyCommit(store: Store, root: string, journal: CommitJournal): Promise<void> {
  for (const op of journal.ops) {
    const target = join(root, op.path)
    if (op.type === 'delete') await removeTree(target)
    else await place(join(root, op.temp), target, join(root, op.aside))
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
  for (const op of journal.ops) if (op.type === 'put') await removeTree(join(root, op.temp))
}
