/**
 * The first registry format's writer (one blob per object, listed by segment manifests),
 * kept for tests that show such images are still pulled. Nothing in forkpoint writes it.
 */
import type { Digest } from '../../src/store/digest.js'
import type { BlobRef } from '../../src/registry/Descriptor.js'
import { type BuiltManifest, type ConfigStyle, built, configBlob } from '../../src/registry/imageManifest.js'
import { MediaType, ROOT_ANNOTATION } from '../../src/registry/mediaTypes.js'

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

/**
 * The manifests of one image: segment manifests whose layers are the objects (so every
 * object is referenced, for registry GC and OCI copy tools), and the index that names the
 * segments and, in an annotation, the root object. Same image, same bytes.
 */
export function buildImageManifests({ root, objects, config }: { root: Digest; objects: BlobRef[]; config: ConfigStyle }): {
  index: BuiltManifest
  segments: BuiltManifest[]
} {
  const configDescriptor = configBlob(config).descriptor
  const segments = segmentObjects(objects).map((segment) =>
    built(
      MediaType.manifest,
      {
        schemaVersion: 2,
        mediaType: MediaType.manifest,
        artifactType: MediaType.objects,
        config: configDescriptor,
        layers: segment.map((o) => ({ mediaType: MediaType.object, digest: o.digest, size: o.size })),
      },
      MediaType.objects,
    ),
  )
  const totalBytes = objects.reduce((n, o) => n + o.size, 0)
  const index = built(
    MediaType.index,
    {
      schemaVersion: 2,
      mediaType: MediaType.index,
      artifactType: MediaType.image,
      manifests: segments.map((s) => s.descriptor),
      annotations: { [ROOT_ANNOTATION]: root, 'dev.forkpoint.objects': String(objects.length), 'dev.forkpoint.bytes': String(totalBytes) },
    },
    MediaType.image,
  )
  return { index, segments }
}
