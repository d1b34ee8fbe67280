import { sha256 } from '../../objects/digest.js'
import type { EntryChange } from './diffTrees.js'
import { bytesOfName } from '../../util/fsName.js'
import { looksBinary } from './looksBinary.js'
import { quotePath } from './quotePath.js'
import { type TreeEntry, contentDigest } from '../../objects/Tree.js'
import { unifiedHunks } from './unifiedHunks.js'

/** A side's bytes (a symlink's are its target), or null when it is too large to diff. */
export type ReadSide = (entry: Exclude<TreeEntry, { type: 'dir' }>, path: string) => Promise<Buffer | null>

/**
 * One change as `git diff` shows it: the `diff --git` header, new, deleted or changed
 * modes, the index line, then the hunks, or `Binary files … differ` when either side is
 * binary or too large to read. A change of type is a deletion and an addition, as in git;
 * an empty directory shows nothing (git has none).
 */
export async function filePatch(change: EntryChange, read: { old: ReadSide; new: ReadSide }): Promise<Buffer> {
  const old = change.old?.type === 'dir' ? undefined : change.old
  const next = change.new?.type === 'dir' ? undefined : change.new
  if (change.status === 'typechange') {
    return Buffer.concat([await section(change.path, old, undefined, read), await section(change.path, undefined, next, read)])
  }
  return old || next ? section(change.path, old, next, read) : Buffer.alloc(0)
}

type Side = Exclude<TreeEntry, { type: 'dir' }> | undefined

async function section(path: string, old: Side, next: Side, read: { old: ReadSide; new: ReadSide }): Promise<Buffer> {
  const a = quotePath(`a/${path}`)
  const b = quotePath(`b/${path}`)
  const header = [`diff --git ${a} ${b}`]
  if (!old) header.push(`new file mode ${gitMode(next)}`)
  else if (!next) header.push(`deleted file mode ${gitMode(old)}`)
  else if (old.mode !== next.mode) header.push(`old mode ${gitMode(old)}`, `new mode ${gitMode(next)}`)
  if (old && next && contentId(old) === contentId(next)) return text(header)
  header.push(`index ${abbreviated(old)}..${abbreviated(next)}${old && next && old.mode === next.mode ? ` ${gitMode(old)}` : ''}`)
  const [before, after] = await Promise.all([old ? read.old(old, path) : Buffer.alloc(0), next ? read.new(next, path) : Buffer.alloc(0)])
  const from = old ? a : '/dev/null'
  const to = next ? b : '/dev/null'
  if (before === null || after === null || looksBinary(before) || looksBinary(after)) return text([...header, `Binary files ${from} and ${to} differ`])
  const hunks = unifiedHunks(before.toString('latin1'), after.toString('latin1'))
  if (!hunks) return text(header)
  return Buffer.concat([text([...header, `--- ${from}`, `+++ ${to}`]), Buffer.from(hunks, 'latin1')])
}

function text(lines: string[]): Buffer {
  return bytesOfName(`${lines.join('\n')}\n`)
}

/** git's modes: 100644, 100755, 120000 for a symlink. */
function gitMode(e: Side): string {
  return e?.type === 'symlink' ? '120000' : `100${(e?.mode ?? 0).toString(8)}`
}

function contentId(e: NonNullable<Side>): string {
  return e.type === 'symlink' ? sha256(bytesOfName(e.target)) : contentDigest(e)
}

/** A content id cut to 12 hex digits (as forkpoint shortens ids), zeros for a side that is absent. */
function abbreviated(e: Side): string {
  return e
    ? contentId(e)
        .replace(/^sha256:/, '')
        .slice(0, 12)
    : '0'.repeat(12)
}
