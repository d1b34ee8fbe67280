import { type WriteStream, createReadStream, createWriteStream } from 'node:fs'
import { finished, pipeline } from 'node:stream/promises'
import type { ReadEntry } from 'tar'
import { InvalidPackError, UnsafePathError } from '../errors/index.js'
import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { requirePackage } from '../util/requirePackage.js'
import type { BlobRef } from './Descriptor.js'
import { ByteBudget } from './ByteBudget.js'
import { checkDeclaredSizes } from './checkDeclaredSizes.js'
import { type Limits, raiseHint } from './limits.js'
import { PACK_MANIFEST_NAME, PACK_OBJECT_RE, type PackManifest, parsePackManifest } from './LegacyPackManifest.js'
import type { Staging } from './Staging.js'

/**
 * Read a pack file of the first format (a zstd-compressed tar of `forkpoint-pack.json`
 * and `objects/sha256/<hex>` entries, written before packs became frames) into the
 * staging area. Every entry is checked before its bytes are kept: only regular files
 * named `forkpoint-pack.json` (first) or `objects/sha256/<hex>`, listed in the manifest
 * with that exact size, within the limits; links, directories, other names (`../x`,
 * `/etc/x`) are refused (exit 5), and so is a pack that decompresses to more than its
 * manifest declares.
 */
export async function readLegacyPack(store: Store, staging: Staging, file: string, limits: Limits): Promise<PackManifest> {
  let manifest: PackManifest | null = null
  const listed = new Map<Digest, BlobRef>()
  const seen = new Set<Digest>()
  const pending: Array<Promise<unknown>> = []
  const unended = new Set<WriteStream>()
  let failure: unknown = null
  // tar and zstd are loaded here, not with the library: most callers never unpack
  const { Parser } = requirePackage('tar') as typeof import('tar')
  const { DecompressStream } = requirePackage('zstd-napi') as typeof import('zstd-napi')
  const parser = new Parser({ strict: true })
  const budget = new ByteBudget(
    TAR_BLOCK * 2 + limits.maxPackManifestBytes,
    (limit) => new InvalidPackError(`${file} decompresses to more than the ${limit} bytes its manifest declares: refusing it`, { file, limit }),
  )

  const refuse = (entry: ReadEntry, error: Error) => {
    failure ??= error
    entry.resume()
    parser.abort(error)
  }

  parser.on('entry', (entry: ReadEntry) => {
    if (failure) return entry.resume()
    if (entry.type !== 'File' && entry.type !== 'OldFile')
      return refuse(entry, new UnsafePathError(`pack entry ${JSON.stringify(entry.path)} is a ${entry.type}: only regular files are allowed`, { path: entry.path }))
    if (manifest === null) {
      if (entry.path !== PACK_MANIFEST_NAME) return refuse(entry, new InvalidPackError(`not a forkpoint pack: first entry is ${JSON.stringify(entry.path)}`))
      if (entry.size > limits.maxPackManifestBytes) {
        return refuse(
          entry,
          new InvalidPackError(
            `${file}: ${PACK_MANIFEST_NAME} is ${entry.size} bytes, more than the limit of ${limits.maxPackManifestBytes} (${raiseHint('maxPackManifestBytes')})`,
          ),
        )
      }
      const parts: Buffer[] = []
      entry.on('data', (d: Buffer) => parts.push(d))
      entry.on('end', () => {
        try {
          const parsed = parsePackManifest(Buffer.concat(parts))
          checkDeclaredSizes(parsed.objects, limits, `pack ${file}`)
          for (const o of parsed.objects) listed.set(o.digest, o)
          budget.limit = packLength(entry.size, parsed.objects)
          manifest = parsed
        } catch (err) {
          failure ??= err
          parser.abort(asError(err))
        }
      })
      return
    }
    const hex = PACK_OBJECT_RE.exec(entry.path)?.[1]
    if (!hex) return refuse(entry, new UnsafePathError(`pack entry ${JSON.stringify(entry.path)} is not an object name: refusing the pack`, { path: entry.path }))
    const digest: Digest = `sha256:${hex}`
    const blob = listed.get(digest)
    if (!blob || seen.has(digest)) return refuse(entry, new InvalidPackError(`pack entry ${entry.path} is ${blob ? 'duplicated' : 'not in the pack manifest'}`))
    if (entry.size !== blob.size) {
      return refuse(entry, new InvalidPackError(`pack entry ${entry.path} is ${entry.size} bytes, but the manifest says ${blob.size}`, { path: entry.path }))
    }
    seen.add(digest)
    const part = `${staging.path(digest)}.part`
    const out = createWriteStream(part)
    unended.add(out)
    entry.on('end', () => unended.delete(out))
    entry.pipe(out)
    // settled at once into a value, so a refusal waits for the others without going unhandled
    const accepted = finished(out).then(() => staging.accept(blob, part, file))
    pending.push(
      accepted.then(
        () => null,
        (err: unknown) => err,
      ),
    )
  })

  await pipeline(createReadStream(file), new DecompressStream(), budget, parser).catch((err: unknown) => {
    failure ??= err
  })
  // a pack cut short ends inside an entry, which then never ends: fail its file so nothing waits for it forever
  for (const out of unended) out.destroy(asError(failure ?? new InvalidPackError(`${file} ends inside an object`)))
  const refusals = (await Promise.all(pending)).filter((err) => err !== null)
  if (failure) throw wrapParseError(failure, file)
  if (refusals.length > 0) throw asError(refusals[0])
  if (manifest === null) throw new InvalidPackError(`${file} holds no ${PACK_MANIFEST_NAME}`)
  for (const o of listed.values()) {
    if (!seen.has(o.digest) && !(await store.has(o.digest))) throw new InvalidPackError(`the pack lists ${o.digest} but does not hold it`, { digest: o.digest })
  }
  return manifest
}

function wrapParseError(err: unknown, file: string): unknown {
  if (err instanceof InvalidPackError || err instanceof UnsafePathError || (err as { exitCode?: number }).exitCode !== undefined) return err
  return new InvalidPackError(`${file} is not a valid pack (truncated or damaged): ${(err as Error).message ?? String(err)}`, { file }, { cause: err })
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
}

const TAR_BLOCK = 512
/** Readers may pad an archive to whole 10 KiB records after its two end blocks. */
const TAR_RECORD = 20 * TAR_BLOCK

/** The most bytes a tar of this manifest and these objects can decompress to. */
function packLength(manifestBytes: number, objects: BlobRef[]): number {
  const entry = (size: number) => TAR_BLOCK + Math.ceil(size / TAR_BLOCK) * TAR_BLOCK
  return objects.reduce((n, o) => n + entry(o.size), entry(manifestBytes)) + TAR_RECORD
}
