import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { BranchBusyError } from '../../errors/index.js'
import { isAlive, self } from '../../sandbox/processId.js'
import { processId as processIdSchema } from '../lifecycle/stateFile.js'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import { readdirOrEmpty } from '../commit/samePath.js'
import { parseJsonOrNull } from '../../util/parseJsonOrNull.js'

/** A sandboxed command running now: in a branch, or in the workspace itself (`branch` null). */
const RunningSandboxSchema = z.object({
  id: z.string().regex(/^[0-9a-f]{12}$/),
  branch: z.string().nullable(),
  /** The command as given: argv, or one string run by `sh -c`. */
  command: z.union([z.string(), z.array(z.string())]),
  /** The process that runs it (and records it here): a sandbox whose process is gone, its pid reused or not, is not listed. */
  owner: processIdSchema,
  startedAt: z.string(),
})
export type RunningSandbox = z.infer<typeof RunningSandboxSchema>

const dir = (store: Store) => store.path('sandboxes')

/**
 * Note a sandboxed command while it runs, in `<store>/sandboxes/<id>.json` (plain files, not
 * objects): what the web view lists as running. The note goes when `done` is called; notes
 * left by processes that died are removed by the next writer (readers skip them).
 *
 * Runs in one view (the workspace, or one branch) do not overlap: a run still going there
 * could hardlink, rename or chown what an ended one left before that is checked, and the
 * next run's walk would take it for what was there before it. So the note is written and
 * then the others are read: of two that start together at least one sees the other.
 * @throws {BranchBusyError} another command is running in the same view (nothing noted)
 */
export async function noteRunningSandbox(store: Store, { branch, command }: Pick<RunningSandbox, 'branch' | 'command'>): Promise<{ done: () => Promise<void> }> {
  const note: RunningSandbox = { id: randomBytes(6).toString('hex'), branch, command, owner: self, startedAt: new Date().toISOString() }
  const path = join(dir(store), `${note.id}.json`)
  await Promise.all((await readNotes(store)).filter(({ note }) => !isAlive(note.owner)).map(({ path }) => fs.rm(path, { force: true })))
  await fs.mkdir(dir(store), { recursive: true })
  await atomicWrite(path, JSON.stringify(note), { fsync: false })
  const done = () => fs.rm(path, { force: true })
  const others = (await runningSandboxes(store)).filter((other) => other.branch === branch && other.id !== note.id)
  if (others.length === 0) return { done }
  await done()
  const where = branch === null ? 'the workspace' : `branch ${branch}`
  throw new BranchBusyError(
    `cannot run in ${where}: a command is running there already (pid ${others[0]!.owner.pid}); runs in one workspace or branch take turns, so what one leaves is checked before the next starts: wait, or run in a branch of its own`,
    { name: branch ?? '', children: [], runs: others.length },
  )
}

/** The sandboxed commands running now, oldest first. */
export async function runningSandboxes(store: Store): Promise<RunningSandbox[]> {
  return (await readNotes(store))
    .map(({ note }) => note)
    .filter((note) => isAlive(note.owner))
    .sort((a, b) => a.startedAt.localeCompare(b.startedAt))
}

/** Every note, alive or not; one gone between the listing and the read, or that is not a note as written here, is left out. */
async function readNotes(store: Store): Promise<Array<{ path: string; note: RunningSandbox }>> {
  const names = (await readdirOrEmpty(dir(store))).filter((n) => /^[0-9a-f]{12}\.json$/.test(n))
  const notes = await Promise.all(
    names.map(async (name) => {
      const text = readStateTextOrNull(join(dir(store), name))
      const note = text === null ? null : RunningSandboxSchema.safeParse(parseJsonOrNull(text))
      return note?.success ? { path: join(dir(store), name), note: note.data } : null
    }),
  )
  return notes.filter((n) => n !== null)
}
