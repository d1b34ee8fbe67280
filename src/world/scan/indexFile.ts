import { createHash } from 'node:crypto'
import { bytesOfName, nameFromBytes } from '../../util/fsName.js'

/** What a row of the index is (the low bits of its kind byte). */
export const FILE_ROW = 0
export const EXEC_ROW = 1
export const SYMLINK_ROW = 2
export const DIR_ROW = 3
/** Flag bits over the kind: the file is stored as chunks; its stat is too recent to vouch for it. */
export const CHUNKED = 0x10
export const RACY = 0x20
export const KIND_MASK = 0x0f

/** Per row: size, mtime ms, ctime ms, inode. */
export const STAT_FIELDS = 4
/** Per directory: mtime ms, ctime ms, inode (its list of entries changes all three). */
export const DIR_STAT_FIELDS = 3
export const DIGEST_BYTES = 32
/** Directory flags: list it on every scan (it holds ignore-rule files or entries a scan skips); its stat is too recent to vouch for its list. */
export const ALWAYS_LIST = 0x01
export const DIR_RACY = 0x02

/**
 * The workspace index, column by column: one row per entry of every directory the last
 * write scan saw (a directory's rows contiguous, sorted as read), one record per
 * directory with its rows and the tree id built from them.
 */
export interface IndexColumns {
  workspace: string
  rows: number
  names: string[]
  /** Symlink targets ('' for other rows). */
  targets: string[]
  kinds: Uint8Array
  stats: Float64Array
  /** Content digests of file rows, 32 raw bytes each. */
  digests: Uint8Array
  dirPaths: string[]
  /** Per directory: first row, row count. */
  dirRows: Uint32Array
  /** Per directory: its tree id, 32 raw bytes. */
  dirTrees: Uint8Array
  /** Per directory: its stat when it was listed, and flags. */
  dirStats: Float64Array
  dirFlags: Uint8Array
  /** SHA-256 of the ignore rules in force (every rule file's place and text, and which files hold rules). */
  rulesKey: Uint8Array
}

/** An index as read back: its columns, and its names as the file has them (UTF-8, NUL-separated), which the files check reads. */
export interface ReadIndex extends IndexColumns {
  nameBytes: Uint8Array
}

const MAGIC = Buffer.from('FPINDEX4')
const HEADER_BYTES = 32

/**
 * The index as bytes: a fixed header, the numeric columns back to back (so reading them
 * back is a view, not a parse), the strings NUL-separated, and a SHA-256 of all that
 * last, so a torn or garbled file is noticed and ignored rather than trusted. Host byte
 * order: the index never leaves this machine.
 */
export function encodeIndex(c: IndexColumns): Buffer[] {
  const dirs = c.dirPaths.length
  const strings = [c.workspace, c.names.join('\0'), c.targets.join('\0'), c.dirPaths.join('\0')].map(bytesOfName)
  const header = Buffer.alloc(HEADER_BYTES)
  MAGIC.copy(header, 0)
  header.writeUInt32LE(c.rows, 8)
  header.writeUInt32LE(dirs, 12)
  strings.forEach((s, i) => header.writeUInt32LE(s.length, 16 + 4 * i))
  const parts = [
    header,
    bytesOf(c.stats, c.rows * STAT_FIELDS * 8),
    bytesOf(c.dirStats, dirs * DIR_STAT_FIELDS * 8),
    bytesOf(c.digests, c.rows * DIGEST_BYTES),
    bytesOf(c.dirTrees, dirs * DIGEST_BYTES),
    bytesOf(c.rulesKey, DIGEST_BYTES),
    bytesOf(c.dirRows, dirs * 2 * 4),
    bytesOf(c.kinds, c.rows),
    bytesOf(c.dirFlags, dirs),
    ...strings,
  ]
  const hash = createHash('sha256')
  for (const p of parts) hash.update(p)
  return [...parts, hash.digest()]
}

function bytesOf(view: ArrayBufferView, length: number): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, length)
}

/** The index from its bytes, or null when they are not a whole, well-formed index. */
export function decodeIndex(raw: Buffer): ReadIndex | null {
  if (raw.length < HEADER_BYTES + DIGEST_BYTES || !raw.subarray(0, 8).equals(MAGIC)) return null
  const body = raw.subarray(0, raw.length - DIGEST_BYTES)
  if (!createHash('sha256').update(body).digest().equals(raw.subarray(body.length))) return null
  const buf = body.byteOffset % 8 === 0 ? body : Buffer.from(body) // Float64Array views need 8-byte alignment
  const rows = buf.readUInt32LE(8)
  const dirs = buf.readUInt32LE(12)
  const stringLengths = [0, 1, 2, 3].map((i) => buf.readUInt32LE(16 + 4 * i))
  let offset = HEADER_BYTES
  const take = (length: number): number => {
    const at = offset
    offset += length
    return at
  }
  const numeric = rows * (STAT_FIELDS * 8 + DIGEST_BYTES + 1) + dirs * (DIR_STAT_FIELDS * 8 + DIGEST_BYTES + 8 + 1) + DIGEST_BYTES
  if (HEADER_BYTES + numeric + stringLengths.reduce((a, b) => a + b, 0) !== buf.length) return null
  const stats = new Float64Array(buf.buffer, buf.byteOffset + take(rows * STAT_FIELDS * 8), rows * STAT_FIELDS)
  const dirStats = new Float64Array(buf.buffer, buf.byteOffset + take(dirs * DIR_STAT_FIELDS * 8), dirs * DIR_STAT_FIELDS)
  const digests = buf.subarray(take(rows * DIGEST_BYTES), offset)
  const dirTrees = buf.subarray(take(dirs * DIGEST_BYTES), offset)
  const rulesKey = buf.subarray(take(DIGEST_BYTES), offset)
  const dirRows = new Uint32Array(buf.buffer, buf.byteOffset + take(dirs * 8), dirs * 2)
  const kinds = buf.subarray(take(rows), offset)
  const dirFlags = buf.subarray(take(dirs), offset)
  const nameBytes = buf.subarray(offset + stringLengths[0]!, offset + stringLengths[0]! + stringLengths[1]!)
  const [workspace, names, targets, dirPaths] = stringLengths.map((length) => nameFromBytes(buf.subarray(take(length), offset)))
  const columns: ReadIndex = {
    nameBytes,
    workspace: workspace!,
    rows,
    names: splitList(names!, rows),
    targets: splitList(targets!, rows),
    kinds,
    stats,
    digests,
    dirPaths: splitList(dirPaths!, dirs),
    dirRows,
    dirTrees,
    dirStats,
    dirFlags,
    rulesKey,
  }
  return wellFormed(columns) ? columns : null
}

function splitList(joined: string, count: number): string[] {
  return count === 0 ? [] : joined.split('\0')
}

function wellFormed(c: IndexColumns): boolean {
  if (c.names.length !== c.rows || c.targets.length !== c.rows || c.dirPaths.length * 2 !== c.dirRows.length) return false
  for (let d = 0; d < c.dirPaths.length; d++) {
    if (c.dirRows[2 * d]! + c.dirRows[2 * d + 1]! > c.rows) return false
  }
  return true
}
