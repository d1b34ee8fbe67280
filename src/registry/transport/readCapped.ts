import { InvalidImageError } from '../../errors/index.js'

/** Read a whole small body, refusing one larger than `max` bytes (a hostile remote could send forever); `hint` says how to raise the cap. */
export async function readCapped(body: AsyncIterable<Uint8Array> | null, max: number, what: string, hint?: string): Promise<Buffer> {
  const parts: Buffer[] = []
  let total = 0
  for await (const chunk of body ?? []) {
    total += chunk.length
    if (total > max) throw new InvalidImageError(`${what} is larger than ${max} bytes: refusing it${hint ? ` (${hint})` : ''}`, { max })
    parts.push(Buffer.from(chunk))
  }
  return Buffer.concat(parts)
}
