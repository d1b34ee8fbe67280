/** The OCI media types forkpoint reads and writes (see docs/registry.md). */
export const MediaType = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  /** OCI 1.1's empty config (`{}`), which every manifest forkpoint writes names. */
  empty: 'application/vnd.oci.empty.v1+json',
  /** The artifactType of the tagged index: one forkpoint image. */
  image: 'application/vnd.forkpoint.image.v1',
  /** The artifactType of the manifest whose layers are an image's packs and their indexes. */
  packs: 'application/vnd.forkpoint.packs.v1',
  /** A pack: zstd frames of many objects. */
  pack: 'application/vnd.forkpoint.pack.v1+zstd',
  /** A pack's index: where each object is in it. */
  packIndex: 'application/vnd.forkpoint.pack.index.v1+json',
  /** The artifactType of a signature manifest. */
  signature: 'application/vnd.forkpoint.signature.v1',
  signatureLayer: 'application/vnd.forkpoint.signature.v1+json',
} as const

export const ROOT_ANNOTATION = 'dev.forkpoint.root'
/** Snapshots of a shallow image whose parents were left out (`push --depth`), comma-separated. */
export const SHALLOW_ANNOTATION = 'dev.forkpoint.shallow'
export const REF_NAME_ANNOTATION = 'org.opencontainers.image.ref.name'

/** Manifest media types a pull asks for. */
export const MANIFEST_ACCEPT = [MediaType.index, MediaType.manifest].join(', ')
