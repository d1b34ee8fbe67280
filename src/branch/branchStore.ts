import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { BranchNotFoundError, UsageError } from '../errors/index.js'
import type { Store } from '../store/Store.js'
import { atomicWrite, atomicWriteSync } from '../util/atomicWrite.js'
import { readTextOrNull, readTextOrNullSync } from '../util/fsx.js'
import type { BranchState } from './types.js'

/**
 * Where branches live inside the store:
 *   branches/bases/<tree hex>/   read-only base views, one per base tree, shared
 *   branches/live/<id>/          one live branch: state.json, upper/ work/ mnt/ (overlay) or root/ (clones)
 *   branches/generations/<key>   commits made into a parent (the workspace, or a branch id)
 *   branches/locks/              creation, and commit locks of parent branches (commits into the workspace take locks/workspace.lock)
 */
export const branchesDir = (store: Store, ...parts: string[]): string => store.path('branches', ...parts)
export const liveDir = (store: Store, id: string, ...parts: string[]): string => branchesDir(store, 'live', id, ...parts)
export const parentKey = (parent: string | null): string => parent ?? 'workspace'

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/

/** A branch name is one safe path-free component (a child's full name joins them with '/'). */
export function assertBranchName(name: string): string {
  if (!NAME.test(name)) throw new UsageError(`invalid branch name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-'`, { name })
  return name
}

export function newBranchId(): string {
  return `${Date.now().toString(36)}-${randomBytes(5).toString('hex')}`
}

/** Write a state file whole (a temp sibling renamed over it); synchronous, as it is read (see readState). */
export async function writeState(store: Store, state: BranchState): Promise<void> {
  atomicWriteSync(liveDir(store, state.id, 'state.json'), [Buffer.from(JSON.stringify(state, null, 2))])
}

/**
 * A branch's state, or null when it has none (yet or any more). Read synchronously: a
 * state file is a few hundred bytes and read for every live branch at each creation and
 * teardown; four thread-pool round trips per file made that the largest part of making
 * and aborting 16 branches at once.
 */
export async function readState(store: Store, id: string): Promise<BranchState | null> {
  const text = readTextOrNullSync(liveDir(store, id, 'state.json'))
  if (text === null) return null
  try {
    const state = JSON.parse(text) as BranchState
    return state.kind === 'branch-state' && state.id === id ? state : null
  } catch {
    return null
  }
}

/** The ids of every branch directory, live or half-made. */
export async function listBranchIds(store: Store): Promise<string[]> {
  const names = await fs.readdir(branchesDir(store, 'live')).catch(() => [] as string[])
  return names.filter((n) => !n.startsWith('.'))
}

export async function listStates(store: Store): Promise<BranchState[]> {
  const states = await Promise.all((await listBranchIds(store)).map((id) => readState(store, id)))
  return states.filter((s): s is BranchState => s !== null).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))
}

export async function findState(store: Store, name: string): Promise<BranchState> {
  const state = (await listStates(store)).find((s) => s.name === name)
  if (!state) throw new BranchNotFoundError(`no live branch named ${JSON.stringify(name)} (see 'forkpoint branch --list')`, { name })
  return state
}

/** Commits made into a parent so far; siblings compare it to tell whether one of them committed first. */
export async function readGeneration(store: Store, parent: string | null): Promise<number> {
  const text = await readTextOrNull(branchesDir(store, 'generations', parentKey(parent)))
  return text === null ? 0 : Number(text.trim()) || 0
}

export async function writeGeneration(store: Store, parent: string | null, generation: number): Promise<void> {
  await fs.mkdir(branchesDir(store, 'generations'), { recursive: true })
  // No fsync (it would be the commit's slowest step): a power cut can at worst lose a count,
  // which turns one `onConflict: "fail"` check into a "merge" one; the journal is the commit point.
  await atomicWrite(branchesDir(store, 'generations', parentKey(parent)), `${generation}\n`)
}
