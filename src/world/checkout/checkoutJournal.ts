import { lstatSync, mkdirSync, promises as fs, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { ForkpointError, InternalError, StoreCorruptError } from '../../errors/index.js'
import { DigestSchema } from '../../objects/digestSchema.js'
import { CHECKOUT_JOURNAL } from '../../store/gc.js'
import { appendReflog } from '../../store/reflog.js'
import { assertRefName, readRef, updateRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { errnoCode } from '../../util/fsx.js'
import { readMarkedStateOrNull } from '../../store/readStateFile.js'
import { NOT_WRITTEN_HERE, writeMarkedState } from '../../store/writtenHere.js'
import { timeSlices } from '../../util/timeSlices.js'
import { fsPath } from '../../util/fsName.js'
import { assertNoLinkedAncestor } from './safePath.js'
import { WorkspacePathSchema } from '../merge/progressSchemas.js'

const isRefName = (name: string): boolean => {
  try {
    return assertRefName(name) === name
  } catch {
    return false
  }
}

const JournalRefSchema = z.strictObject({
  name: z.string().refine(isRefName, 'not a ref name'),
  id: DigestSchema,
  /** Compare-and-swap: what the ref held when the journal was planned. */
  expected: DigestSchema.nullable(),
  message: z.string(),
})
export type JournalRef = z.infer<typeof JournalRefSchema>

/** What HEAD's file holds: a ref it follows or a snapshot id, one line. */
const HeadTextSchema = z.string().refine((text) => {
  const line = text.replace(/\n$/, '')
  return line.startsWith('ref: ') ? isRefName(line.slice(5)) : DigestSchema.safeParse(line).success
}, 'not what HEAD holds')

/** A step of a checkout; `place` moves the file or directory staged for it (`stepFile`) to its path. */
const CheckoutStepSchema = z.strictObject({ op: z.enum(['remove', 'mkdir', 'place']), path: WorkspacePathSchema })
export type CheckoutStep = z.infer<typeof CheckoutStepSchema>

/**
 * An in-place checkout is a list of steps written down (and fsynced) before the first one
 * runs. Every step can run again without harm, so a checkout cut short at any point is
 * finished by the next command that opens the workspace: the target ends as it was
 * (interrupted before the journal was written) or as the snapshot, never half. It names
 * paths inside the workspace and the staging directory's name under the store's `tmp/`;
 * every other path is derived, so a planted journal cannot remove or move a file elsewhere;
 * and only the file written here is run (`writtenHere.ts`), so one cannot place a `.git/`
 * of its own in the workspace either.
 */
const CheckoutJournalSchema = z.strictObject({
  kind: z.literal('checkout-journal'),
  schemaVersion: z.literal(1),
  workspace: z.string(),
  /** A name under the store's `tmp/` (as `Store.tempPath('checkout')` makes it). */
  staging: z.string().regex(/^\.checkout\.tmp-[0-9a-z-]{1,80}$/),
  steps: z.array(CheckoutStepSchema),
  /** What HEAD becomes when the steps are done. */
  head: HeadTextSchema,
  /** A ref moved before the first step (a merge moving the head HEAD follows); done again, it is a no-op. */
  ref: JournalRefSchema.optional(),
})
export type CheckoutJournal = z.infer<typeof CheckoutJournalSchema>

/** The staging directory of a checkout, from its name in the journal. */
export const stagingDir = (store: Store, name: string): string => store.path('tmp', name)

/** Where step `index` of a checkout stages what it places. */
export const stepFile = (staging: string, index: number): string => join(staging, String(index))

function journalPath(store: Store): string {
  return store.path(CHECKOUT_JOURNAL)
}

export async function writeJournal(store: Store, journal: CheckoutJournal): Promise<void> {
  await writeMarkedState(journalPath(store), journal, { fsync: true })
}

export async function dropJournal(store: Store): Promise<void> {
  await fs.rm(journalPath(store), { force: true })
}

/** Move the journal's ref unless it is there already (a replayed journal). */
export async function moveJournalRef(store: Store, ref: JournalRef): Promise<void> {
  if ((await readRef(store, ref.name)) === ref.id) return
  await updateRef({ store, name: ref.name, id: ref.id, expected: ref.expected, message: ref.message })
}

/** Move the journal's ref, run every step, then set HEAD and drop the journal and the staging area. */
export async function runJournal(store: Store, journal: CheckoutJournal): Promise<void> {
  if (journal.ref) await moveJournalRef(store, journal.ref)
  const pause = timeSlices()
  const staging = stagingDir(store, journal.staging)
  for (const [index, step] of journal.steps.entries()) {
    await runStep(journal.workspace, step, stepFile(staging, index))
    const due = pause()
    if (due) await due
  }
  const old = await readRef(store, 'HEAD').catch(() => null)
  await atomicWrite(store.path('HEAD'), journal.head, { fsync: true })
  // Compared with what HEAD held, so a replayed journal does not log the move twice.
  const now = await readRef(store, 'HEAD')
  if (now && now !== old) await appendReflog(store, 'HEAD', { old, new: now, message: 'checkout' })
  await fs.rm(staging, { recursive: true, force: true })
  await fs.rm(journalPath(store), { force: true })
}

/** One step; a mkdir or a place synchronously (a system call or two: less than a trip through the thread pool), a removal of what may be a big tree not. */
async function runStep(workspace: string, step: CheckoutStep, staged: string): Promise<void> {
  assertNoLinkedAncestor(workspace, step.path)
  const abs = fsPath(join(workspace, step.path))
  switch (step.op) {
    case 'remove':
      await fs.rm(abs, { recursive: true, force: true })
      return
    case 'mkdir': {
      const st = lstatSync(abs, { throwIfNoEntry: false })
      if (st?.isDirectory()) return
      if (st) rmSync(abs, { force: true })
      mkdirSync(abs)
      return
    }
    case 'place':
      try {
        renameSync(staged, abs)
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') return // placed before an interruption
        if (errnoCode(err) !== 'EISDIR' && errnoCode(err) !== 'ENOTEMPTY' && errnoCode(err) !== 'ENOTDIR') throw err
        await fs.rm(abs, { recursive: true, force: true })
        renameSync(staged, abs)
      }
  }
}

/** Where a journal that could not be replayed is set aside (with why), for a person to read. */
export const ABANDONED_JOURNAL = 'checkout-journal.abandoned.json'

/**
 * Finish a checkout that an earlier process started and did not complete. A journal that
 * cannot be finished (unreadable, or a step that fails again) never wedges the
 * workspace: it is set aside (ABANDONED_JOURNAL) with its staging area, HEAD stays where
 * it was, and the error is thrown once, saying so; `discard` (a forced checkout, which
 * overwrites the workspace anyway) sets it aside without throwing.
 */
export async function recoverCheckout(store: Store, workspace: string, { discard = false } = {}): Promise<boolean> {
  const read = readMarkedStateOrNull(journalPath(store))
  if (read === null) return false
  const { text } = read
  const parsed = CheckoutJournalSchema.safeParse(read.value)
  if (!parsed.success) {
    const why =
      read.value === null
        ? `the journal is not one forkpoint wrote: ${NOT_WRITTEN_HERE}, or it does not parse`
        : `the journal is not one forkpoint writes: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'the file'}: ${i.message}`).join('; ')}`
    await setAside(store, text, why, null)
    if (discard) return false
    throw new StoreCorruptError(`refusing an interrupted checkout: ${why}; it was set aside (${ABANDONED_JOURNAL} in the store), nothing of it was run`, {
      path: journalPath(store),
    })
  }
  const journal = parsed.data
  if (journal.workspace !== workspace) return false
  try {
    await runJournal(store, journal)
    return true
  } catch (err) {
    await setAside(store, text, (err as Error).message, stagingDir(store, journal.staging))
    if (discard) return false
    const note = `; the interrupted checkout was set aside (${ABANDONED_JOURNAL} in the store), HEAD is unchanged: 'forkpoint checkout --force HEAD' restores the workspace`
    if (err instanceof ForkpointError) {
      err.message += note
      throw err
    }
    throw new InternalError(`cannot finish an interrupted checkout: ${(err as Error).message}${note}`, { cause: (err as Error).message })
  }
}

async function setAside(store: Store, text: string, why: string, staging: string | null): Promise<void> {
  await atomicWrite(store.path(ABANDONED_JOURNAL), JSON.stringify({ why, journal: text }), { fsync: true })
  await fs.rm(journalPath(store), { force: true })
  if (staging !== null) await fs.rm(staging, { recursive: true, force: true })
}
