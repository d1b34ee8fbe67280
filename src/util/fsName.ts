import { type Dirent, type Stats, promises as fs, lstatSync, readdirSync, readlinkSync } from 'node:fs'

/**
 * File names are bytes; forkpoint keeps them as strings. A name that is valid UTF-8 is its
 * text. Every byte of a name that is not valid UTF-8 becomes one lone low surrogate,
 * U+DC80 + (byte - 0x80) (Python's "surrogateescape", PEP 383), which no valid name can
 * hold, so the mapping is reversible and old trees (all valid UTF-8) read as they were.
 * Canonical JSON writes such a code unit as the escape `\udcff` (docs/world-integrity.md).
 * At the file system the bytes are given back: `fsPath` turns such a path into a Buffer.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const ESCAPED_BYTE = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/g

/** The name (or path) for file system bytes: their UTF-8 text, invalid bytes escaped. */
export function nameFromBytes(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8')
  return text.includes('\uFFFD') ? decodeEscaping(bytes) : text
}

/** The file system bytes of a name (or path) as `nameFromBytes` gave it. */
export function bytesOfName(name: string): Buffer {
  if (!LONE_SURROGATE.test(name)) return Buffer.from(name, 'utf8')
  const parts: Buffer[] = []
  let from = 0
  for (const m of name.matchAll(ESCAPED_BYTE)) {
    parts.push(Buffer.from(name.slice(from, m.index), 'utf8'), Buffer.of(m[0].charCodeAt(0) - 0xdc00))
    from = m.index + 1
  }
  parts.push(Buffer.from(name.slice(from), 'utf8'))
  return Buffer.concat(parts)
}

/** Whether `name` is a name `nameFromBytes` can give: only escaped bytes that are not valid UTF-8 as they stand. */
export function isCanonicalName(name: string): boolean {
  return !LONE_SURROGATE.test(name) || nameFromBytes(bytesOfName(name)) === name
}

/** Whether `name` holds bytes that are not UTF-8 (escaped). */
export function hasEscapedBytes(name: string): boolean {
  return LONE_SURROGATE.test(name)
}

/** The path to give Node's fs: the string itself, or its bytes when it holds escaped ones. */
export function fsPath(path: string): string | Buffer {
  return LONE_SURROGATE.test(path) ? bytesOfName(path) : path
}

/** A directory's entries, names as `nameFromBytes` gives them. */
export function readdirEntries(dir: string): Array<{ name: string; dirent: Dirent }> {
  return readdirSync(fsPath(dir), { withFileTypes: true, encoding: 'buffer' }).map((d) => ({ name: nameFromBytes(d.name as unknown as Buffer), dirent: d as unknown as Dirent }))
}

export async function readdirNames(dir: string): Promise<string[]> {
  return (await fs.readdir(fsPath(dir), { encoding: 'buffer' })).map(nameFromBytes)
}

export function readlinkName(path: string): string {
  return nameFromBytes(readlinkSync(fsPath(path), { encoding: 'buffer' }))
}

export async function readlinkNameAsync(path: string): Promise<string> {
  return nameFromBytes(await fs.readlink(fsPath(path), { encoding: 'buffer' }))
}

export function lstatPath(path: string): Stats | undefined {
  return lstatSync(fsPath(path), { throwIfNoEntry: false })
}

/** Strict UTF-8 (shortest forms, no surrogates, up to U+10FFFF); each byte of anything else escaped. */
function decodeEscaping(bytes: Uint8Array): string {
  let out = ''
  let i = 0
  while (i < bytes.length) {
    const length = validSequenceAt(bytes, i)
    if (length === 0) {
      out += String.fromCharCode(0xdc00 + bytes[i]!)
      i++
    } else {
      out += Buffer.from(bytes.subarray(i, i + length)).toString('utf8')
      i += length
    }
  }
  return out
}

/** The length of the valid UTF-8 sequence starting at `i`, or 0. */
function validSequenceAt(b: Uint8Array, i: number): number {
  const c = b[i]!
  const cont = (k: number) => i + k < b.length && (b[i + k]! & 0xc0) === 0x80
  if (c < 0x80) return 1
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0
    const second = b[i + 1]!
    if (c === 0xe0 && second < 0xa0) return 0 // overlong
    if (c === 0xed && second >= 0xa0) return 0 // a surrogate
    return 3
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0
    const second = b[i + 1]!
    if (c === 0xf0 && second < 0x90) return 0 // overlong
    if (c === 0xf4 && second >= 0x90) return 0 // above U+10FFFF
    return 4
  }
  return 0
}
