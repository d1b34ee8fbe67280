/** One entry of an initramfs: a directory, a file, a symlink or a character device, with its permission bits. */
export type CpioEntry =
  | { path: string; type: 'dir'; mode: number }
  | { path: string; type: 'file'; mode: number; data: Buffer }
  | { path: string; type: 'symlink'; target: string }
  | { path: string; type: 'char'; mode: number; major: number; minor: number }

const TYPE_BITS = { dir: 0o040000, file: 0o100000, symlink: 0o120000, char: 0o020000 } as const

/**
 * An uncompressed `newc` cpio archive, the format the Linux kernel unpacks as an
 * initramfs: per entry a 110-byte ASCII header, the NUL-terminated name and the data,
 * each padded to 4 bytes; a `TRAILER!!!` entry ends it. Owners are root, times zero,
 * so the same entries give the same bytes (and the same digest in the store).
 */
export function writeCpio(entries: readonly CpioEntry[]): Buffer {
  const parts: Buffer[] = []
  let ino = 1
  for (const entry of [...entries, { path: 'TRAILER!!!', type: 'file', mode: 0, data: Buffer.alloc(0) } as const]) {
    const data = entry.type === 'file' ? entry.data : entry.type === 'symlink' ? Buffer.from(entry.target) : Buffer.alloc(0)
    const mode = TYPE_BITS[entry.type] | (entry.type === 'symlink' ? 0o777 : entry.mode)
    const [rdevMajor, rdevMinor] = entry.type === 'char' ? [entry.major, entry.minor] : [0, 0]
    const name = Buffer.from(`${entry.path.replace(/^\/+/, '')}\0`)
    const isTrailer = entry.path === 'TRAILER!!!'
    const fields = [isTrailer ? 0 : ino++, isTrailer ? 0 : mode, 0, 0, entry.type === 'dir' ? 2 : 1, 0, data.length, 0, 0, rdevMajor, rdevMinor, name.length, 0]
    parts.push(pad(Buffer.concat([Buffer.from('070701' + fields.map((n) => n.toString(16).padStart(8, '0')).join(''), 'ascii'), name])), pad(data))
  }
  return Buffer.concat(parts)
}

function pad(bytes: Buffer): Buffer {
  const extra = (4 - (bytes.length % 4)) % 4
  return extra === 0 ? bytes : Buffer.concat([bytes, Buffer.alloc(extra)])
}
