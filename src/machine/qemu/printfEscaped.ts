/**
 * Bytes as an argument of the shell's `printf %b` (a builtin in busybox sh and dash, so
 * decoding starts no program): every byte `keep` refuses as `\0ooo`. With no `keep`,
 * every byte is escaped, and the result is safe inside single quotes.
 */
export function printfEscaped(bytes: Uint8Array, keep: (byte: number) => boolean = () => false): string {
  let out = ''
  for (const b of bytes) out += keep(b) ? String.fromCharCode(b) : `\\0${b.toString(8).padStart(3, '0')}`
  return out
}
