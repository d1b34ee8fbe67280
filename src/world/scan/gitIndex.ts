/**
 * Whether two git index files stage the same thing: the same entries (mode, object id,
 * flags and path, in order), whatever their stat data, extensions and checksum. A `git
 * status` that refreshes an index rewrites only those, so a workspace where only that
 * happened is clean. False for whatever this reader does not know: index version 4, a
 * split index, a repository of SHA-256 object ids, a damaged file.
 */
export function sameStaging(a: Buffer, b: Buffer): boolean {
  const ours = stagedEntries(a)
  const theirs = stagedEntries(b)
  return ours !== null && theirs !== null && ours.equals(theirs)
}

/** Offsets in an index entry of versions 2 and 3 (SHA-1): the stat data ends at 24, then mode, 12 bytes of ids and size, the object id, flags. */
const MODE = 24
const OBJECT_ID = 40
const FIXED = 62
const EXTENDED = 0x4000
const CHECKSUM = 20

/** The bytes of every entry that say what is staged, one after another; null where the file is not an index this reads. */
function stagedEntries(index: Buffer): Buffer | null {
  if (index.length < 12 + CHECKSUM || index.toString('latin1', 0, 4) !== 'DIRC') return null
  const version = index.readUInt32BE(4)
  if (version !== 2 && version !== 3) return null
  const parts: Buffer[] = []
  let at = 12
  for (let i = index.readUInt32BE(8); i > 0; i--) {
    if (at + FIXED > index.length - CHECKSUM) return null
    const extended = (index.readUInt16BE(at + FIXED - 2) & EXTENDED) !== 0
    if (extended && version < 3) return null
    const nameEnd = index.indexOf(0, at + FIXED + (extended ? 2 : 0))
    if (nameEnd < 0) return null
    parts.push(index.subarray(at + MODE, at + MODE + 4), index.subarray(at + OBJECT_ID, nameEnd))
    at += Math.ceil((nameEnd - at + 1) / 8) * 8 // padded with NULs to a multiple of 8
  }
  return extensionsEndAtChecksum(index, at) ? Buffer.concat(parts) : null
}

/**
 * Whether what follows the entries is a run of extensions (a 4-byte signature, a 4-byte
 * size, the data) ending right at a SHA-1 checksum, with no split-index link (whose
 * entries would be a delta against another file).
 */
function extensionsEndAtChecksum(index: Buffer, from: number): boolean {
  const end = index.length - CHECKSUM
  let at = from
  while (at < end) {
    if (at + 8 > end || index.toString('latin1', at, at + 4) === 'link') return false
    at += 8 + index.readUInt32BE(at + 4)
  }
  return at === end
}
