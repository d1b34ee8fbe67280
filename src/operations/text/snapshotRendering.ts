import { counted } from '../../util/plural.js'
import { quotePath } from '../../world/diff/quotePath.js'
import type { Rendering } from '../rendering.js'
import { formatBytes } from './format.js'

/** A snapshot's result as its rendering reads it: of the workspace, or of a fork's branch (`ref`). */
export type SnapshotShown =
  { id: string; created: boolean; files: number; bytes: number; hashedFiles: number; hashedBytes: number; skipped: string[] } | { id: string; created: boolean; ref: string }

const isBranchSnapshot = (r: SnapshotShown): r is Extract<SnapshotShown, { ref: string }> => 'ref' in r

/**
 * How the command line shows a snapshot: its id, and what it read. Apart from the operation's
 * schema, so that a snapshot the store's service makes is shown without loading zod
 * (`src/cli/snapshotMain.ts`).
 */
export const snapshotRendering: Rendering<SnapshotShown> = {
  human: (r) => r.id,
  notes: (r) =>
    isBranchSnapshot(r)
      ? r.created
        ? []
        : [`nothing changed since ${r.ref}`]
      : [`${r.created ? 'snapshot' : 'nothing changed since HEAD'}: ${counted(r.files, 'file')}, ${formatBytes(r.bytes)}; read ${r.hashedFiles} (${formatBytes(r.hashedBytes)})`],
  warnings: (r) => (isBranchSnapshot(r) ? [] : r.skipped.map((path) => `forkpoint: skipped ${quotePath(path)} (not a file, directory or symlink)`)),
}
