import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { BranchNotFoundError, UsageError } from '../../errors/index.js'
import { type Digest, digestHex } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { atomicWrite, atomicWriteSync } from '../../util/atomicWrite.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import { hostMountPoint } from '../mount/hostMountPoint.js'
import { BRANCH_ID, type StateFile, assertLayersDerived, parseStateFile, refuse, stateFileOf } from './stateFile.js'
import type { BranchState, HostView } from '../types.js'

/**
 * Where branches live inside the store:
 *   branches/bases/<tree hex>/   read-only base directories, one per base tree, shared
 *   branches/live/<id>/          one live branch: state.json, upper/ work/ mnt/ (overlay) or root/ (clones)
 *   branches/generations/<key>   commits made into a parent (the workspace, or a branch id)
 *   branches/locks/              creation, and commit locks of parent branches (commits into the workspace take locks/workspace.lock)
 */
export const branchesDir = (store: Store, ...parts: string[]): string => store.path('branches', ...parts)
export const liveDir = (store: Store, id: string, ...parts: string[]): string => branchesDir(store, 'live', assertBranchId(id), ...parts)
/** Where the base directory of a tree is (or will be). */
export const baseDirPath = (store: Store, tree: Digest): string => branchesDir(store, 'bases', digestHex(tree))
export const parentKey = (parent: string | null): string => parent ?? 'workspace'

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/

/** A branch name is one safe path-free component (a child's full name joins them with '/'). */
export function assertBranchName(name: string): string {
  if (!NAME.test(name)) throw new UsageError(`invalid branch name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-'`, { name })
  return name
}

/** A branch id names a directory: nothing but the form `newBranchId` makes passes. */
export function assertBranchId(id: string): string {
  if (!BRANCH_ID.test(id)) throw new UsageError(`invalid branch id ${JSON.stringify(id)}`, { value: id })
  return id
}

export function newBranchId(): string {
  return `${Date.now().toString(36)}-${randomBytes(5).toString('hex')}`
}

/** Write a state file whole (a temp sibling renamed over it); synchronous, as it is read (see readState). */
export async function writeState(store: Store, state: BranchState): Promise<void> {
  atomicWriteSync(liveDir(store, state.id, 'state.json'), [Buffer.from(JSON.stringify(stateFileOf(state), null, 2))])
}

/**
 * A branch's state, or null when it has none (yet or any more). Read synchronously: a
 * state file is a few hundred bytes and read for every live branch at each creation and
 * teardown; four thread-pool round trips per file made that the largest part of making
 * and aborting 16 branches at once.
 */
export async function readState(store: Store, id: string): Promise<BranchState | null> {
  return readStateSync(store, id, [])
}

/**
 * A state file holds ids only; its layers and where its view is mounted are derived here:
 * the base directory of its tree, the frozen `layer/` of each branch up its chain of parents,
 * and the mount the kernel shows for its upper layer. `below`: the ids of the children
 * this read came from, so a chain of parents that loops is refused.
 * @throws {BranchStateError}
 */
function readStateSync(store: Store, id: string, below: string[]): BranchState | null {
  const file = liveDir(store, id, 'state.json')
  const text = readStateTextOrNull(file)
  const stored = text === null ? null : parseStateFile(text, id, file)
  if (stored === null) return null
  if (below.includes(id) || below.length > MAX_DEPTH) refuse(below[0]!, file, 'its chain of parents loops or is too deep')
  const layers = layersOf(store, stored, below, file)
  assertLayersDerived(stored, layers, file)
  const { hostView, layers: _named, ...rest } = stored
  return { ...rest, layers, ...(hostView ? { hostView: mountedView(store, stored, hostView.via) } : {}) }
}

/** Branches of branches deeper than this are refused: nothing makes them, and each level is a read. */
const MAX_DEPTH = 64

function layersOf(store: Store, stored: StateFile, below: string[], file: string): string[] {
  if (stored.parent === null) return [baseDirPath(store, stored.baseTree)]
  const own = liveDir(store, stored.id, 'layer')
  if (stored.backend !== 'overlay') return [own]
  const parent = readStateSync(store, stored.parent, [...below, stored.id])
  // a parent gone (its child is cleaned up next): only the branch's own layer is left to take down
  if (parent === null) return [own]
  if (parent.backend !== stored.backend || parent.baseTree !== stored.baseTree) refuse(stored.id, file, `its parent ${parent.id} has another backend or base`)
  return [own, ...parent.layers]
}

/** A `--path` mount is known by the kernel's mount of the branch's upper layer elsewhere than its default mount point. */
function mountedView(store: Store, stored: StateFile, via: HostView['via']): HostView {
  if (stored.backend !== 'overlay') refuse(stored.id, liveDir(store, stored.id, 'state.json'), `a ${stored.backend} branch has no host mount`)
  const point = hostMountPoint(via, liveDir(store, stored.id, 'upper'))
  return { via, path: point === null || point === liveDir(store, stored.id, 'mnt') ? null : point }
}

/** The ids of every branch directory, live or half-made; a name of another form is no branch of ours. */
export async function listBranchIds(store: Store): Promise<string[]> {
  const names = await fs.readdir(branchesDir(store, 'live')).catch(() => [] as string[])
  return names.filter((n) => BRANCH_ID.test(n))
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
  const text = readStateTextOrNull(branchesDir(store, 'generations', parentKey(parent)))
  return text === null ? 0 : Number(text.trim()) || 0
}

export async function writeGeneration(store: Store, parent: string | null, generation: number): Promise<void> {
  await fs.mkdir(branchesDir(store, 'generations'), { recursive: true })
  // No fsync (it would be the commit's slowest step): a power cut can at worst lose a count,
  // which turns one `onConflict: "fail"` check into a "merge" one; the journal is the commit point.
  await atomicWrite(branchesDir(store, 'generations', parentKey(parent)), `${generation}\n`)
}
