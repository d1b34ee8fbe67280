import { promises as fs } from 'node:fs'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import { branchesDir } from '../lifecycle/branchStore.js'
import { isSafeName } from '../../objects/Tree.js'

/** How many commits into the workspace a long-lived `Workspace` can catch up with without a rescan. */
const KEPT = 64

const recordPath = (store: Store, generation: number): string => branchesDir(store, 'committed', `${generation}.json`)

/**
 * Write down which workspace paths the commit that makes `generation` changes, before
 * that commit is journaled as applying: so a record always exists for a commit applied
 * the normal way, and a Workspace that last saw an earlier generation can bring its base
 * up to date by looking at those paths only. A missing record only costs a rescan.
 */
export async function recordCommittedPaths(store: Store, generation: number, paths: string[]): Promise<void> {
  await fs.mkdir(branchesDir(store, 'committed'), { recursive: true })
  await atomicWrite(recordPath(store, generation), JSON.stringify(paths))
  await fs.rm(recordPath(store, generation - KEPT), { force: true })
}

/** Drop the record of a generation finished by crash recovery: what it says cannot be trusted, so the next base is a rescan. */
export async function forgetCommittedPaths(store: Store, generation: number): Promise<void> {
  await fs.rm(recordPath(store, generation), { force: true })
}

/** Every path changed by the commits after generation `from` up to `to`, or null when a record is missing. */
export async function committedPaths(store: Store, from: number, to: number): Promise<string[] | null> {
  if (to <= from || to - from > KEPT) return null
  const paths = new Set<string>()
  for (let g = from + 1; g <= to; g++) {
    const text = readStateTextOrNull(recordPath(store, g))
    const record = text === null ? null : parseRecord(text)
    if (record === null) return null
    for (const path of record) paths.add(path)
  }
  return [...paths].sort()
}

/** The paths of a record, or null when it is torn or names anything but plain relative paths. */
function parseRecord(text: string): string[] | null {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return null
  }
  const plain = (p: unknown) => typeof p === 'string' && p.split('/').every(isSafeName)
  return Array.isArray(value) && value.every(plain) ? (value as string[]) : null
}
