import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Store } from '../store/Store.js'
import { atomicWrite } from '../util/atomicWrite.js'
import { errnoCode } from '../util/fsx.js'

/** A sandboxed command running now: in a branch, or in the workspace itself (`branch` null). */
export interface RunningSandbox {
  id: string
  branch: string | null
  /** The command as given: argv, or one string run by `sh -c`. */
  command: string | string[]
  /** The process that runs it (and records it here): a sandbox whose process is gone is not listed. */
  pid: number
  startedAt: string
}

const dir = (store: Store) => store.path('sandboxes')

/**
 * Note a sandboxed command while it runs, in `<store>/sandboxes/<id>.json` (plain files, not
 * objects): what the web view lists as running. The note goes when `done` is called; one
 * left by a process that died is ignored, its pid gone.
 */
export async function noteRunningSandbox(store: Store, { branch, command }: Pick<RunningSandbox, 'branch' | 'command'>): Promise<{ done: () => Promise<void> }> {
  const note: RunningSandbox = { id: randomBytes(6).toString('hex'), branch, command, pid: process.pid, startedAt: new Date().toISOString() }
  const path = join(dir(store), `${note.id}.json`)
  await fs.mkdir(dir(store), { recursive: true })
  await atomicWrite(path, JSON.stringify(note), { fsync: false })
  return { done: () => fs.rm(path, { force: true }) }
}

/** The sandboxed commands running now, oldest first; notes of processes gone are removed as they are found. */
export async function runningSandboxes(store: Store): Promise<RunningSandbox[]> {
  const names = await fs.readdir(dir(store)).catch((err: unknown) => {
    if (errnoCode(err) === 'ENOENT') return []
    throw err
  })
  const notes = await Promise.all(names.filter((n) => /^[0-9a-f]{12}\.json$/.test(n)).map((n) => readNote(join(dir(store), n))))
  return notes.filter((n): n is RunningSandbox => n !== null).sort((a, b) => a.startedAt.localeCompare(b.startedAt))
}

async function readNote(path: string): Promise<RunningSandbox | null> {
  let note: RunningSandbox
  try {
    note = JSON.parse(await fs.readFile(path, 'utf8')) as RunningSandbox
  } catch {
    return null // gone meanwhile, or being written
  }
  if (alive(note.pid)) return note
  await fs.rm(path, { force: true })
  return null
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return errnoCode(err) === 'EPERM' // someone else's process, alive
  }
}
