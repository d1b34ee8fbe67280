import { z } from 'zod'
import { isSafeName } from '../../objects/Tree.js'
import type { ConflictKind, PathConflict } from './mergeWorld.js'

/** A path inside the workspace, as a merge or commit writes them: names joined by `/`, none empty, `.` or `..`. */
export const WorkspacePathSchema = z.string().refine((path) => path.split('/').every(isSafeName), 'not a path inside the workspace')

const CONFLICT_KINDS = ['content', 'add/add', 'modify/delete', 'type', 'mode', 'rename/rename', 'rename/delete'] as const satisfies readonly ConflictKind[]

export const PathConflictSchema: z.ZodType<PathConflict> = z.object({
  path: WorkspacePathSchema,
  kind: z.enum(CONFLICT_KINDS),
  kept: z.object({ ours: WorkspacePathSchema.nullable(), theirs: WorkspacePathSchema.nullable() }),
})
