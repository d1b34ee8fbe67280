import { InvalidImageError } from '../../errors/index.js'
import { type Digest, isDigest, sha256 } from '../../objects/digest.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { type BlobRef, type Descriptor, assertDescriptor } from './Descriptor.js'
import { MediaType, ROOT_ANNOTATION, SHALLOW_ANNOTATION } from './mediaTypes.js'
import { annotationsSchema, parseUntrusted } from './ociSchemas.js'
import { previewValue } from '../../util/previewValue.js'
import { parseStrictJson } from '../../util/strictJson.js'

/** A manifest ready to send: its exact bytes and the descriptor naming them. */
export interface BuiltManifest {
  descriptor: Descriptor
  bytes: Buffer
}

/**
 * The config every manifest forkpoint writes names: OCI 1.1's empty descriptor (the blob
 * `{}`), as an artifact's manifest does. The manifest's `artifactType` says what it holds;
 * container tools refuse it as no image instead of reading the packs as layer tarballs.
 */
const EMPTY_CONFIG_BYTES = Buffer.from('{}')
export const EMPTY_CONFIG: { descriptor: Descriptor; bytes: Buffer } = {
  descriptor: { mediaType: MediaType.empty, digest: sha256(EMPTY_CONFIG_BYTES), size: EMPTY_CONFIG_BYTES.length },
  bytes: EMPTY_CONFIG_BYTES,
}

export function built(mediaType: string, body: object, artifactType?: string): BuiltManifest {
  const bytes = canonicalBytes(body)
  const descriptor: Descriptor = { mediaType, digest: sha256(bytes), size: bytes.length }
  if (artifactType) descriptor.artifactType = artifactType
  return { descriptor, bytes }
}

/** A pack and its index, as an image's manifest lists them. */
export interface PackPair {
  pack: BlobRef
  index: BlobRef
}

/**
 * The manifests of one image stored as packs: one manifest whose layers are each pack's
 * index and the pack (so registry GC keeps them and OCI copy tools carry them), and the
 * index that names it and, in annotations, the root object and the snapshots whose
 * history was cut (a shallow image). The manifest repeats those annotations, so a copy of
 * it alone still names its image. Same packs, same bytes.
 */
export function buildPackedImage({ root, packs, objects, bytes, shallow }: { root: Digest; packs: PackPair[]; objects: number; bytes: number; shallow: Digest[] }): {
  index: BuiltManifest
  manifest: BuiltManifest
} {
  const annotations: Record<string, string> = { [ROOT_ANNOTATION]: root, 'dev.forkpoint.objects': String(objects), 'dev.forkpoint.bytes': String(bytes) }
  if (shallow.length > 0) annotations[SHALLOW_ANNOTATION] = [...shallow].sort().join(',')
  const manifest = built(
    MediaType.manifest,
    {
      schemaVersion: 2,
      mediaType: MediaType.manifest,
      artifactType: MediaType.packs,
      config: EMPTY_CONFIG.descriptor,
      layers: packs.flatMap((p) => [
        { mediaType: MediaType.packIndex, digest: p.index.digest, size: p.index.size },
        { mediaType: MediaType.pack, digest: p.pack.digest, size: p.pack.size },
      ]),
      // repeated from the index: a copy of the manifest alone (plain `skopeo copy`) is still an image
      annotations,
    },
    MediaType.packs,
  )
  const index = built(
    MediaType.index,
    { schemaVersion: 2, mediaType: MediaType.index, artifactType: MediaType.image, manifests: [manifest.descriptor], annotations },
    MediaType.image,
  )
  return { index, manifest }
}

/** The layers of a packs manifest: pack indexes and packs, each descriptor checked. */
function packsLayers(bytes: Buffer, where: string): Descriptor[] {
  const manifest = parseJson(bytes, where)
  if (manifest['artifactType'] !== MediaType.packs || !Array.isArray(manifest['layers'])) throw new InvalidImageError(`${where} is not a forkpoint packs manifest`)
  return manifest['layers'].map((l, i) => {
    const d = assertDescriptor(l, `${where} layers[${i}]`)
    if (d.mediaType !== MediaType.packIndex && d.mediaType !== MediaType.pack) throw new InvalidImageError(`${where}: layer ${d.digest} is a ${d.mediaType}`)
    return d
  })
}

/** The packs of a packs manifest: each pack's index blob, and every pack blob with its size. */
export function parsePacksManifest(bytes: Buffer, where: string): { indexes: BlobRef[]; packs: Map<Digest, number> } {
  const indexes: BlobRef[] = []
  const packs = new Map<Digest, number>()
  for (const d of packsLayers(bytes, where)) {
    if (d.mediaType === MediaType.packIndex) indexes.push({ digest: d.digest, size: d.size })
    else packs.set(d.digest, d.size)
  }
  return { indexes, packs }
}

/**
 * The packs of a packs manifest as pairs, in the order this code writes them (each pack's
 * index, then the pack); null when the layers are not laid out so.
 */
export function pairedPacks(bytes: Buffer, where: string): PackPair[] | null {
  const layers = packsLayers(bytes, where)
  const pairs: PackPair[] = []
  for (let i = 0; i < layers.length; i += 2) {
    const [index, pack] = [layers[i]!, layers[i + 1]]
    if (index.mediaType !== MediaType.packIndex || pack?.mediaType !== MediaType.pack) return null
    pairs.push({ index: { digest: index.digest, size: index.size }, pack: { digest: pack.digest, size: pack.size } })
  }
  return pairs
}

/** The digest of the config a manifest names (null when it names none that parses). */
export function manifestConfig(bytes: Buffer, where: string): Digest | null {
  const config = parseJson(bytes, where)['config']
  try {
    return assertDescriptor(config, `${where} config`).digest
  } catch {
    return null
  }
}

/** Whether a manifest is a forkpoint packs manifest (a repository may hold other images too). */
export function isPacksManifest(bytes: Buffer): boolean {
  return parseJson(bytes, 'manifest')['artifactType'] === MediaType.packs
}

/** What a pull learns from the tagged index. */
export interface ParsedIndex {
  root: Digest
  /** The packs manifests. */
  segments: Descriptor[]
  /** Snapshots whose parents the image leaves out. */
  shallow: Digest[]
  /** The object count and bytes the index announces (for reports only: nothing is trusted from them). */
  objects: number
  bytes: number
}

function parseJson(bytes: Buffer, where: string): Record<string, unknown> {
  try {
    const value = parseStrictJson(bytes)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // fall through to the error below
  }
  throw new InvalidImageError(`${where} is not a JSON object`)
}

/**
 * What a pull learns from the image a tag names: our index, or a packs manifest alone (what
 * a copy tool carries when it copies one manifest of the index, as plain `skopeo copy`
 * does), which is then its image's only segment.
 */
export function parseImageIndex(bytes: Buffer, where: string): ParsedIndex {
  const index = parseJson(bytes, where)
  const annotations = parseUntrusted(annotationsSchema.optional(), index['annotations'], `${where}: its annotations`) ?? {}
  if (index['mediaType'] === MediaType.manifest && index['artifactType'] === MediaType.packs) {
    return { ...imageAnnotations(annotations, where), segments: [{ mediaType: MediaType.manifest, digest: sha256(bytes), size: bytes.length }] }
  }
  // copy tools that predate artifactType (skopeo 1.9's `copy --all`) rewrite the index without it; the root annotation survives
  const artifactType = index['artifactType'] ?? (annotations[ROOT_ANNOTATION] === undefined ? undefined : MediaType.image)
  if (index['mediaType'] !== MediaType.index || artifactType !== MediaType.image) {
    throw new InvalidImageError(`${where} is not a forkpoint image (artifactType ${artifactType === undefined ? 'none' : previewValue(artifactType)})`)
  }
  const image = imageAnnotations(annotations, where)
  const manifests = index['manifests']
  if (!Array.isArray(manifests) || manifests.length === 0) throw new InvalidImageError(`${where} lists no packs manifest`)
  const segments = manifests.map((m, i) => assertDescriptor(m, `${where} manifests[${i}]`))
  for (const s of segments) {
    if (s.mediaType !== MediaType.manifest) throw new InvalidImageError(`${where}: segment ${s.digest} is a ${s.mediaType}`)
  }
  return { ...image, segments }
}

/** The root, the cut snapshots and the announced sizes an index (or a packs manifest copied alone) carries. */
function imageAnnotations(annotations: Record<string, string>, where: string): Omit<ParsedIndex, 'segments'> {
  const root = annotations[ROOT_ANNOTATION]
  if (!isDigest(root)) throw new InvalidImageError(`${where} names no root object`)
  const cut = annotations[SHALLOW_ANNOTATION]
  const shallow = cut !== undefined && cut !== '' ? cut.split(',') : []
  if (!shallow.every(isDigest)) throw new InvalidImageError(`${where}: malformed ${SHALLOW_ANNOTATION} annotation`)
  const announced = (key: string) => (/^\d{1,15}$/.test(annotations[key] ?? '') ? Number(annotations[key]) : 0) // for reports only: a count, or 0
  return { root, shallow, objects: announced('dev.forkpoint.objects'), bytes: announced('dev.forkpoint.bytes') }
}
