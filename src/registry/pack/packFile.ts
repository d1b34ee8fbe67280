import { InvalidPackError } from '../../errors/index.js'
import { type Digest, isDigest } from '../../objects/digest.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { type Limits, frameLimit, raiseHint } from './limits.js'
import { type PackIndex, type ReadIndex, checkPackIndex } from '../../store/PackIndex.js'
import { parseStrictJson } from '../../util/strictJson.js'

/**
 * A pack file (`forkpoint pack`) is a pack as it travels to a remote, preceded by a zstd
 * *skippable frame* holding its header: `{kind: "pack", schemaVersion: 2, root, shallow,
 * index}`. Standard zstd skips that frame, so `zstd -dc image.fpk` prints the objects
 * one after another; forkpoint reads the header and then the frames it indexes.
 */
export interface PackFileHeader {
  kind: 'pack'
  schemaVersion: 2
  root: Digest
  shallow: Digest[]
  index: PackIndex
}

/** The first four bytes of a zstd skippable frame (little-endian 0x184D2A50). */
export const SKIPPABLE_MAGIC = 0x184d2a50
/** Magic and length: the bytes before the header. */
export const HEADER_PREFIX_BYTES = 8

export function encodeHeader(header: PackFileHeader): Buffer {
  const body = canonicalBytes(header)
  const prefix = Buffer.alloc(HEADER_PREFIX_BYTES)
  prefix.writeUInt32LE(SKIPPABLE_MAGIC, 0)
  prefix.writeUInt32LE(body.length, 4)
  return Buffer.concat([prefix, body])
}

/** The header's length from the file's first bytes; InvalidPackError if it is not a packfile or the header passes the cap. */
export function headerLength(prefix: Buffer, file: string, limits: Limits): number {
  const length = prefix.readUInt32LE(4)
  if (length > limits.maxPackManifestBytes) {
    throw new InvalidPackError(`${file}: its header is ${length} bytes, more than the limit of ${limits.maxPackManifestBytes} (${raiseHint('maxPackManifestBytes')})`, { file })
  }
  return length
}

/** A checked header: the root, the cut snapshots, the pack's index. */
export function parseHeader(bytes: Buffer, file: string, limits: Limits): { root: Digest; shallow: Digest[]; index: ReadIndex } {
  let header: PackFileHeader
  try {
    header = parseStrictJson(bytes) as PackFileHeader
  } catch {
    throw new InvalidPackError(`${file}: its header is not JSON`, { file })
  }
  if (header?.kind !== 'pack' || header.schemaVersion !== 2 || !isDigest(header.root) || !Array.isArray(header.shallow) || !header.shallow.every(isDigest)) {
    throw new InvalidPackError(`${file}: its header is malformed`, { file })
  }
  return { root: header.root, shallow: header.shallow, index: checkPackIndex(header.index, `${file}'s index`, frameLimit(limits)) }
}
