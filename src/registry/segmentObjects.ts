import type { BlobRef } from './Descriptor.js'

/** On average one boundary every 128 objects; never more than 4096 in one segment. */
const BOUNDARY_ODDS = 128
const MAX_SEGMENT = 4096

/**
 * Split an image's objects into segments for its segment manifests. Objects are sorted
 * by digest and a segment ends after an object whose digest falls on a boundary, so a
 * boundary depends only on that object: changing one file changes the few segments that
 * hold the new objects, and every other segment (and its manifest digest) stays the same.
 */
export function segmentObjects(objects: Iterable<BlobRef>): BlobRef[][] {
  const sorted = [...objects].sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0))
  const segments: BlobRef[][] = []
  let current: BlobRef[] = []
  for (const object of sorted) {
    current.push(object)
    if (isBoundary(object.digest) || current.length >= MAX_SEGMENT) {
      segments.push(current)
      current = []
    }
  }
  if (current.length > 0) segments.push(current)
  return segments
}

function isBoundary(digest: string): boolean {
  // hex characters 7..14 of the digest: uniformly random, independent of the sort order's prefix
  return Number.parseInt(digest.slice(14, 22), 16) % BOUNDARY_ODDS === 0
}
