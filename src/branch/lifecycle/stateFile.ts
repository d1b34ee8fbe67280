import { z } from 'zod'
import { BranchStateError } from '../../errors/index.js'
import { type Digest, isDigest } from '../../objects/digest.js'
import type { BranchState, HostView } from '../types.js'

/** A branch id as `newBranchId` makes it: the only form that may name a directory under `branches/live/`. */
export const BRANCH_ID = /^[0-9a-z]{1,13}-[0-9a-f]{10}$/

const NAME_PART = '[A-Za-z0-9_][A-Za-z0-9._-]{0,99}'
const FULL_NAME = new RegExp(`^${NAME_PART}(?:/${NAME_PART})*$`)

/** A process as `processId.ts` identifies it: its pid and start time. */
export const processId = z.strictObject({ pid: z.number().int().positive(), start: z.string().regex(/^(?:\d+|\?)$/) })

/**
 * A state file as written: ids, names, a tree digest, process ids. No path: every layer,
 * mount point and view is derived from the ids under the store (`readState`). `layers` and
 * `hostView.path` are the fields older versions wrote; they are accepted only when they
 * say what derivation says (checked by the reader), so a file naming anything else is refused.
 */
const stateFile = z.strictObject({
  kind: z.literal('branch-state'),
  schemaVersion: z.literal(1),
  id: z.string().regex(BRANCH_ID),
  name: z.string().regex(FULL_NAME),
  parent: z.string().regex(BRANCH_ID).nullable(),
  backend: z.enum(['overlay', 'reflink', 'copy']),
  baseTree: z.custom<Digest>((v) => isDigest(v), 'not a sha256 digest'),
  layers: z.array(z.string()).optional(),
  parentGeneration: z.number().int().nonnegative(),
  owner: processId.nullable(),
  holder: processId.nullable(),
  hostView: z.strictObject({ via: z.enum(['kernel', 'fuse']), path: z.string().nullable().optional() }).optional(),
  disk: z.number().int().positive().optional(),
  createdAt: z.string().max(64),
})

export type StateFile = z.infer<typeof stateFile>

/** What is written of a state: the paths left out. */
export function stateFileOf(state: BranchState): StateFile {
  const { layers: _layers, hostView, ...rest } = state
  return { ...rest, ...(hostView ? { hostView: { via: hostView.via } } : {}) }
}

/**
 * The state file of branch `id`, checked field by field; null when it is not JSON at all
 * (nothing of it can be used, and the directory is removed as a half-made branch).
 * @throws {BranchStateError} a file that names a path, or any other field forkpoint would not write
 */
export function parseStateFile(text: string, id: string, file: string): StateFile | null {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return null
  }
  const parsed = stateFile.safeParse(json)
  if (!parsed.success) refuse(id, file, parsed.error.issues.map((i) => `${i.path.join('.') || 'the file'}: ${i.message}`).join('; '))
  if (parsed.data.id !== id) refuse(id, file, `it names branch ${parsed.data.id}`)
  if (parsed.data.hostView?.path) refuse(id, file, `it names the path ${JSON.stringify(parsed.data.hostView.path)} to mount on`)
  return parsed.data
}

/** An older file's `layers` must be exactly the derived ones. @throws {BranchStateError} */
export function assertLayersDerived(stored: StateFile, derived: string[], file: string): void {
  const named = stored.layers
  if (named && (named.length !== derived.length || named.some((l, i) => l !== derived[i]))) {
    refuse(stored.id, file, `its layers ${JSON.stringify(named)} are not the branch's own (${JSON.stringify(derived)})`)
  }
}

export function refuse(id: string, file: string, why: string): never {
  throw new BranchStateError(
    `refusing the state of branch ${id} (${file}): ${why}. forkpoint derives every path of a branch from its id and never reads one from a state file; this one was planted or damaged: remove its directory by hand`,
    { id, file },
  )
}

export type StoredHostView = Pick<HostView, 'via'>
