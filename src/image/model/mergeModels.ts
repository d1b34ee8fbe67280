import { type Digest, sha256 } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { type FileEntry, type TreeEntry, contentDigest, dirEntry, treeObject } from '../../objects/Tree.js'
import { type ModelMergeOptions, mergeTensorInPlace } from './mergeTensors.js'
import type { ModelLayer } from '../../objects/ModelLayer.js'
import { type StoredTensorFile, isSafetensors, modelFiles, openTensorFile, readModelLayer, storeTensorParts } from './modelLayer.js'
import { type Piece, readRange, wholePieces } from '../storedPieces.js'
import { type Dtype, FLOAT_DTYPES, type FloatDtype, type TensorInfo, decodeFloats, encodeFloats, safetensorsHeader } from './safetensors.js'

export type ModelMerge = { outcome: 'merged'; digest: Digest; tensors: number; files: number } | { outcome: 'conflict'; conflicts: string[] }

/**
 * Merge two model layers that both changed since `base`, file by file: a file one side
 * changed is taken from it; a `.safetensors` file both changed is merged tensor by
 * tensor with `options` (a tensor one side changed taken from it, one both changed
 * combined by the method, written in ours' dtype); anything else both changed, or any
 * tensor that cannot be combined (no base, not a float, shapes that differ), is a
 * conflict, and nothing is written. Without `options`, every file both changed is one.
 */
export async function mergeModelLayers(store: Store, base: Digest | undefined, ours: Digest, theirs: Digest, options: ModelMergeOptions | undefined): Promise<ModelMerge> {
  const [b, o, t] = await Promise.all(
    [base, ours, theirs].map(async (d) => (d === undefined ? new Map<string, FileEntry>() : modelFiles(store, (await readModelLayer(store, d)).tree))),
  )
  const result = new Map<string, FileEntry>()
  const conflicts: string[] = []
  let tensors = 0
  let files = 0
  for (const path of [...new Set([...b!.keys(), ...o!.keys(), ...t!.keys()])].sort()) {
    const [be, oe, te] = [b!.get(path), o!.get(path), t!.get(path)]
    const side = changedSide(be, oe, te, sameEntry)
    if (side !== 'both') {
      const picked = side === 'ours' ? oe : te
      if (picked) result.set(path, picked)
      continue
    }
    if (!options || !isSafetensors(path) || !be || !oe || !te) {
      conflicts.push(path)
      continue
    }
    const merged = await mergeTensorFile(store, path, [be, oe, te], options)
    if ('conflicts' in merged) conflicts.push(...merged.conflicts)
    else {
      result.set(path, merged.entry)
      tensors += merged.tensors
      files++
    }
  }
  if (conflicts.length > 0) return { outcome: 'conflict', conflicts }
  const layer: ModelLayer = { kind: 'model', schemaVersion: 1, tree: await writeTree(store, result) }
  return { outcome: 'merged', digest: await store.writeBlob(canonicalBytes(layer)), tensors, files }
}

/** Which side's version a three-way merge keeps: ours (theirs left it, or both changed it alike), theirs (only theirs changed it), or both (each its own way). */
function changedSide<T>(base: T, ours: T, theirs: T, same: (a: T, b: T) => boolean): 'ours' | 'theirs' | 'both' {
  if (same(ours, theirs) || same(base, theirs)) return 'ours'
  return same(base, ours) ? 'theirs' : 'both'
}

const sameEntry = (a: FileEntry | undefined, b: FileEntry | undefined): boolean => (a && b ? a.mode === b.mode && contentDigest(a) === contentDigest(b) : a === b)

/** One tensor of one side: where it is, and what identifies its bytes (its pieces' digests, or its bytes' when pieces do not align with it). */
interface Held {
  info: TensorInfo
  side: StoredTensorFile
  pieces: Piece[] | null
}

async function mergeTensorFile(
  store: Store,
  path: string,
  entries: [FileEntry, FileEntry, FileEntry],
  options: ModelMergeOptions,
): Promise<{ entry: FileEntry; tensors: number } | { conflicts: string[] }> {
  const [base, ours, theirs] = (await Promise.all(entries.map((e) => openTensorFile(store, e, path)))) as [StoredTensorFile, StoredTensorFile, StoredTensorFile]
  const byName = new Map([base, ours, theirs].map((side) => [side, new Map(side.file.tensors.map((t) => [t.name, t]))]))
  const held = (side: StoredTensorFile, name: string): Held | undefined => {
    const info = byName.get(side)!.get(name)
    return info && { info, side, pieces: wholePieces(side.pieces, info.begin, info.end) }
  }
  const bytesOf = (h: Held) => readRange(store, h.side.pieces, h.info.begin, h.info.end)
  // tensors are the same when their pieces are: no bytes read for a tensor one side left alone
  // by their bytes' hash when any side's pieces do not align with the tensor (the two forms never match)
  const identity = (h: Held | undefined, byPieces: boolean) =>
    h ? `${h.info.dtype} ${h.info.shape.join('x')} ${byPieces ? h.pieces!.map((p) => p.blob).join() : sha256(bytesOf(h))}` : ''
  const out: Array<{ name: string; dtype: Dtype; shape: number[]; part: Uint8Array | Piece[] }> = []
  const conflicts: string[] = []
  let merged = 0
  const names = [...new Set([...ours.file.tensors.map((t) => t.name), ...theirs.file.tensors.map((t) => t.name)])]
  for (const name of names) {
    const sides = [held(base, name), held(ours, name), held(theirs, name)] as const
    const byPieces = sides.every((h) => !h || h.pieces !== null)
    const [kb, ko, kt] = sides.map((h) => identity(h, byPieces)) as [string, string, string]
    const side = changedSide(kb, ko, kt, (x, y) => x === y)
    if (side !== 'both') {
      const picked = side === 'ours' ? sides[1] : sides[2]
      if (picked) out.push({ name, dtype: picked.info.dtype, shape: picked.info.shape, part: picked.pieces ?? bytesOf(picked) })
      continue
    }
    const [b, o, t] = sides
    if (!b || !o || !t || !combinable(b.info, o.info, t.info)) {
      conflicts.push(`${path}:${name}`)
      continue
    }
    const [vb, vo, vt] = [b, o, t].map((h) => decodeFloats(bytesOf(h), h.info.dtype as FloatDtype))
    const values = mergeTensorInPlace(vb!, vo!, vt!, options, { file: path, tensor: name }) // the decoded copies are ours to overwrite
    out.push({ name, dtype: o.info.dtype, shape: o.info.shape, part: encodeFloats(values, o.info.dtype as FloatDtype) })
    merged++
  }
  if (conflicts.length > 0) return { conflicts }
  // metadata both sides changed: ours, as for the other layers' fields
  const metadata =
    changedSide(base.file.metadata, ours.file.metadata, theirs.file.metadata, (x, y) => JSON.stringify(x) === JSON.stringify(y)) === 'theirs'
      ? theirs.file.metadata
      : ours.file.metadata
  const lengths = out.map((t) => ({ ...t, length: t.part instanceof Uint8Array ? t.part.length : t.part.reduce((n, p) => n + p.size, 0) }))
  const header = safetensorsHeader(lengths, metadata)
  return { entry: await storeTensorParts(store, path.split('/').pop()!, [header, ...out.map((t) => t.part)]), tensors: merged }
}

function combinable(...infos: TensorInfo[]): boolean {
  const [first] = infos
  return infos.every((i) => (FLOAT_DTYPES as readonly string[]).includes(i.dtype) && i.shape.join('x') === first!.shape.join('x'))
}

/** A tree of the files by path, subdirectories built from the paths. */
async function writeTree(store: Store, files: Map<string, FileEntry>): Promise<Digest> {
  const here: TreeEntry[] = []
  const below = new Map<string, Map<string, FileEntry>>()
  for (const [path, entry] of files) {
    const slash = path.indexOf('/')
    if (slash === -1) here.push({ ...entry, name: path })
    else {
      const dir = path.slice(0, slash)
      if (!below.has(dir)) below.set(dir, new Map())
      below.get(dir)!.set(path.slice(slash + 1), entry)
    }
  }
  for (const [dir, inside] of below) here.push(dirEntry(dir, await writeTree(store, inside)))
  return store.writeBlob(treeObject(here).bytes)
}
