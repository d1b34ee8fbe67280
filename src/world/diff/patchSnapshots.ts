import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Store } from '../../store/Store.js'
import type { StoreLocator } from '../../store/findStore.js'
import { type DiffSides, type SnapshotDiff, diffOfSides, diffSides } from './diffSnapshots.js'
import { changedEntries } from './diffTrees.js'
import { type ReadSide, filePatch } from './filePatch.js'
import { bytesOfName, fsPath } from '../../util/fsName.js'
import { errnoCode } from '../../util/fsx.js'
import { UNTRUSTED_READ } from '../../util/untrustedRead.js'

/**
 * Past this size a file is not read for a patch: it shows as `Binary files … differ`, as
 * git shows files past `core.bigFileThreshold`. Files this large are stored chunked anyway.
 */
export const MAX_PATCH_FILE_BYTES = 8 * 1024 * 1024

/** Past this many bytes a patch collected into one JSON document stops at a file's end (`patchTruncated`). */
export const MAX_COLLECTED_PATCH_BYTES = 16 * 1024 * 1024

/** A unified diff in git's format between two snapshots, or one and the workspace (`b` absent), one file's section at a time. */
export async function* patchSnapshots(args: StoreLocator & { a: string; b?: string | undefined; maxFileBytes?: number }): AsyncGenerator<Buffer> {
  yield* patchSides(await diffSides(args), args.maxFileBytes)
}

/** The patch of sides already resolved: files are read one change at a time, none past `maxFileBytes`. */
export async function* patchSides(sides: DiffSides, maxFileBytes = MAX_PATCH_FILE_BYTES): AsyncGenerator<Buffer> {
  const fromStore = storeSide(sides.store, maxFileBytes)
  const read = { old: fromStore, new: sides.b ? fromStore : workspaceSide(sides.workspace, maxFileBytes) }
  for await (const change of changedEntries({ source: sides.source, a: sides.aTree, b: sides.bTree })) {
    const section = await filePatch(change, read)
    if (section.length > 0) yield section
  }
}

/** A patch as one string (UTF-8; other bytes are replaced), whole files only, up to `maxBytes`. */
export async function collectPatch(sections: AsyncIterable<Buffer>, maxBytes = MAX_COLLECTED_PATCH_BYTES): Promise<{ patch: string; patchTruncated: boolean }> {
  const kept: Buffer[] = []
  let size = 0
  for await (const section of sections) {
    if (size + section.length > maxBytes) return { patch: Buffer.concat(kept).toString('utf8'), patchTruncated: true }
    kept.push(section)
    size += section.length
  }
  return { patch: Buffer.concat(kept).toString('utf8'), patchTruncated: false }
}

function storeSide(store: Store, maxBytes: number): ReadSide {
  return async (entry) => {
    if (entry.type === 'symlink') return bytesOfName(entry.target)
    if ('chunks' in entry || entry.size > maxBytes) return null
    // the entry's size is the tree's word; the object's own size bounds the read
    const size = store.sizeOf(entry.blob)
    return size !== null && size > maxBytes ? null : store.readBlob(entry.blob)
  }
}

function workspaceSide(workspace: string, maxBytes: number): ReadSide {
  return async (entry, path) => {
    if (entry.type === 'symlink') return bytesOfName(entry.target)
    return entry.size > maxBytes ? null : readUpTo(fsPath(join(workspace, path)), maxBytes)
  }
}

/** A workspace file's bytes, or null when since the scan it has grown past `maxBytes` or is no regular file (gone, or swapped for a link or FIFO). */
async function readUpTo(path: string | Buffer, maxBytes: number): Promise<Buffer | null> {
  const handle = await fs.open(path, UNTRUSTED_READ).catch((err: unknown) => {
    if (['ENOENT', 'ENOTDIR', 'ELOOP'].includes(errnoCode(err) ?? '')) return null
    throw err
  })
  if (handle === null) return null
  try {
    const stat = await handle.stat()
    if (!stat.isFile() || stat.size > maxBytes) return null
    const { size } = stat
    const bytes = Buffer.alloc(size)
    const { bytesRead } = await handle.read(bytes, 0, size, 0)
    return bytes.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

/** The file-level diff with its patch collected (`collectPatch`): what `diff --patch --json` and the service return. */
export async function diffWithPatch(args: StoreLocator & { a: string; b?: string | undefined }): Promise<SnapshotDiff & { patch: string; patchTruncated: boolean }> {
  const sides = await diffSides(args)
  return { ...(await diffOfSides(sides)), ...(await collectPatch(patchSides(sides))) }
}
