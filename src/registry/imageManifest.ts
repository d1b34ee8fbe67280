import { InvalidImageError } from '../errors/index.js'
import { type Digest, isDigest, sha256 } from '../store/digest.js'
import { canonicalBytes } from '../util/canonicalJson.js'
import { type BlobRef, type Descriptor, assertDescriptor } from './Descriptor.js'
import { MediaType, ROOT_ANNOTATION } from './mediaTypes.js'
import { segmentObjects } from './segmentObjects.js'

/** A manifest ready to send: its exact bytes and the descriptor naming them. */
export interface BuiltManifest {
  descriptor: Descriptor
  bytes: Buffer
}

/**
 * The config of a segment manifest: a minimal OCI image config, so that standard tools
 * (plain `skopeo inspect`) treat the image as one, or our own for registries that refuse it.
 * The empty config OCI suggests for artifacts makes skopeo refuse the image.
 */
export type ConfigStyle = 'image' | 'custom'

export const IMAGE_CONFIG_BYTES = canonicalBytes({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] } })
export const CUSTOM_CONFIG_BYTES = canonicalBytes({ artifactType: MediaType.objects })

export function configBlob(style: ConfigStyle): { descriptor: Descriptor; bytes: Buffer } {
  const bytes = style === 'image' ? IMAGE_CONFIG_BYTES : CUSTOM_CONFIG_BYTES
  const mediaType = style === 'image' ? MediaType.imageConfig : MediaType.objectsConfig
  return { descriptor: { mediaType, digest: sha256(bytes), size: bytes.length }, bytes }
}

function built(mediaType: string, body: object, artifactType?: string): BuiltManifest {
  const bytes = canonicalBytes(body)
  const descriptor: Descriptor = { mediaType, digest: sha256(bytes), size: bytes.length }
  if (artifactType) descriptor.artifactType = artifactType
  return { descriptor, bytes }
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

/** What a pull learns from the tagged index. */
export interface ParsedIndex {
  root: Digest
  segments: Descriptor[]
}

function parseJson(bytes: Buffer, where: string): Record<string, unknown> {
  try {
    const value = JSON.parse(bytes.toString('utf8')) as unknown
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // fall through to the error below
  }
  throw new InvalidImageError(`${where} is not a JSON object`)
}

export function parseImageIndex(bytes: Buffer, where: string): ParsedIndex {
  const index = parseJson(bytes, where)
  const root = (index['annotations'] as Record<string, unknown> | undefined)?.[ROOT_ANNOTATION]
  // copy tools that predate artifactType (skopeo 1.9's `copy --all`) rewrite the index without it; the root annotation survives
  const artifactType = index['artifactType'] ?? (root === undefined ? undefined : MediaType.image)
  if (index['mediaType'] !== MediaType.index || artifactType !== MediaType.image) {
    throw new InvalidImageError(`${where} is not a forkpoint image (artifactType ${String(artifactType ?? 'none')})`)
  }
  if (!isDigest(root)) throw new InvalidImageError(`${where} names no root object`)
  const manifests = index['manifests']
  if (!Array.isArray(manifests) || manifests.length === 0) throw new InvalidImageError(`${where} lists no segment manifests`)
  const segments = manifests.map((m, i) => assertDescriptor(m, `${where} manifests[${i}]`))
  for (const s of segments) {
    if (s.mediaType !== MediaType.manifest) throw new InvalidImageError(`${where}: segment ${s.digest} is a ${s.mediaType}`)
  }
  return { root, segments }
}

export function parseSegmentManifest(bytes: Buffer, where: string): BlobRef[] {
  const manifest = parseJson(bytes, where)
  if (manifest['artifactType'] !== MediaType.objects || !Array.isArray(manifest['layers'])) {
    throw new InvalidImageError(`${where} is not a forkpoint segment manifest`)
  }
  return manifest['layers'].map((l, i) => {
    const d = assertDescriptor(l, `${where} layers[${i}]`)
    return { digest: d.digest, size: d.size }
  })
}
