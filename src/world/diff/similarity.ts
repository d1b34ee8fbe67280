/**
 * git's similarity index (diffcore-delta.c): a file is cut into spans that end at a newline
 * or after 64 bytes (a CR before LF is skipped in text), each span hashed into one of
 * 107,927 buckets; the bytes two files share are, bucket by bucket, the smaller of their
 * byte counts; the similarity is that share of the larger file.
 */

/** A file's spans: bucket numbers, ascending, and the bytes that fell into each. */
export interface Signature {
  size: number
  buckets: Uint32Array
  bytes: Uint32Array
}

const HASHBASE = 107927
const MAX_SPAN = 64

export function signatureOf(data: Buffer, text: boolean): Signature {
  const counts = new Map<number, number>()
  const add = (hash: number, n: number) => counts.set(hash, (counts.get(hash) ?? 0) + n)
  let accum1 = 0
  let accum2 = 0
  let n = 0
  for (let i = 0; i < data.length; i++) {
    const c = data[i]!
    if (text && c === 0x0d && data[i + 1] === 0x0a) continue
    const old1 = accum1
    accum1 = (((accum1 << 7) ^ (accum2 >>> 25)) + c) >>> 0
    accum2 = ((accum2 << 7) ^ (old1 >>> 25)) >>> 0
    if (++n < MAX_SPAN && c !== 0x0a) continue
    add(bucketOf(accum1, accum2), n)
    n = accum1 = accum2 = 0
  }
  if (n > 0) add(bucketOf(accum1, accum2), n)
  const buckets = Uint32Array.from([...counts.keys()].sort((a, b) => a - b))
  return { size: data.length, buckets, bytes: Uint32Array.from(buckets, (b) => counts.get(b)!) }
}

/** git computes `(accum1 + accum2 * 0x61) % HASHBASE` in 32-bit unsigned arithmetic. */
function bucketOf(accum1: number, accum2: number): number {
  return ((accum1 + Math.imul(accum2, 0x61)) >>> 0) % HASHBASE
}

/** The bytes of `a` also found in `b`, bucket by bucket. */
export function sharedBytes(a: Signature, b: Signature): number {
  let shared = 0
  for (let i = 0, j = 0; i < a.buckets.length && j < b.buckets.length;) {
    if (a.buckets[i]! < b.buckets[j]!) i++
    else if (a.buckets[i]! > b.buckets[j]!) j++
    else shared += Math.min(a.bytes[i++]!, b.bytes[j++]!)
  }
  return shared
}

/** The similarity of two files in percent, as git's rename detection scores it (0 when either is empty). */
export function similarity(a: Signature, b: Signature): number {
  const larger = Math.max(a.size, b.size)
  return larger === 0 ? 0 : (sharedBytes(a, b) * 100) / larger
}

/** Whether two sizes leave room for `minimum` percent at all: the shared bytes never exceed the smaller file. */
export function sizesCanReach(a: number, b: number, minimum: number): boolean {
  return Math.min(a, b) * 100 >= minimum * Math.max(a, b)
}
