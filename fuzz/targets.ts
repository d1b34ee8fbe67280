import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { compress } from 'zstd-napi'
import { parseSafetensors } from '../src/image/model/safetensors.js'
import { verifyLedger } from '../src/effects/verifyLedger.js'
import { readMachineImage } from '../src/machine/image/MachineImage.js'
import { readMachineLayer } from '../src/machine/MachineLayer.js'
import { fileTransport } from '../src/registry/transport/fileTransport.js'
import { parseImageIndex, parsePacksManifest } from '../src/registry/manifest/imageManifest.js'
import { DEFAULT_LIMITS, frameLimit } from '../src/registry/pack/limits.js'
import { encodeHeader } from '../src/registry/pack/packFile.js'
import { unpackImage } from '../src/registry/pack/unpackImage.js'
import { type Digest, sha256 } from '../src/objects/digest.js'
import { type PackIndex, parsePackIndex } from '../src/store/PackIndex.js'
import { Store, parseStructured } from '../src/store/Store.js'
import { validateArtifact } from '../src/trace/ci/validateArtifact.js'
import { transcriptToRun } from '../src/trace/core/transcript.js'
import { Redactor } from '../src/trace/redact/Redactor.js'
import { canonicalBytes } from '../src/util/canonicalJson.js'
import { makeSnapshot, validateSnapshot } from '../src/objects/Snapshot.js'
import { validateChunks } from '../src/objects/Chunks.js'
import { fileEntry, treeObject, validateTree } from '../src/objects/Tree.js'
import { judgeError } from './oracle.js'
import type { OpenTarget, RunInput } from './Target.js'

/**
 * Every parser of untrusted input that runs in-process, each opened as a function of one
 * input. Where a parser reads from a store or a directory, the input is written there
 * first (a pack file, a layout's index.json, an object); a store a pack was unpacked into
 * is replaced, so every pack meets an empty store.
 */
export const openTarget: OpenTarget = async (name, context) => {
  await fs.mkdir(context['scratch']!, { recursive: true })
  const scratch = await fs.mkdtemp(join(context['scratch']!, `${name}-`))
  const open = OPENERS[name]
  if (!open) throw new Error(`no fuzz target ${name}`)
  return open({ ...context, scratch })
}

const OPENERS: Record<string, (context: Record<string, string>) => Promise<RunInput>> = {
  pack: async ({ scratch }) => {
    const unpack = await freshStoreUnpacker(scratch!)
    return (input) => unpack(input)
  },
  objects: async ({ scratch, store }) => {
    const unpack = await freshStoreUnpacker(scratch!)
    const honest = await storedObjects(store!)
    return (input) => eachJudged([() => validateObject(input), () => unpack(packAround(input, honest))])
  },
  layout: async ({ scratch, layout }) => {
    const copy = join(scratch!, 'layout')
    await fs.cp(layout!, copy, { recursive: true })
    const transport = fileTransport(copy)
    const limit = frameLimit(DEFAULT_LIMITS)
    return async (input) => {
      await fs.writeFile(join(copy, 'index.json'), input)
      await eachJudged([
        () => transport.getManifest('v1'),
        () => transport.listTags(),
        () => parseImageIndex(input, 'image index'),
        () => parsePacksManifest(input, 'packs manifest'),
        () => parsePackIndex(input, 'pack index', limit),
      ])
    }
  },
  safetensors: () => Promise.resolve((input) => Promise.resolve(parseSafetensors(input, 'fuzz.safetensors'))),
  'run-artifact': ({ scratch }) => {
    const file = join(scratch!, 'fuzz.run.json')
    return Promise.resolve(async (input) => {
      await fs.writeFile(file, input)
      return validateArtifact({ artifact: file })
    })
  },
  transcript: () => Promise.resolve((input) => Promise.resolve(transcriptToRun(input, 'fuzz.jsonl', { env: {}, now: new Date(0) }))),
  ledger: async ({ store }) => {
    const open = await Store.open(store!)
    return (input) => withObject(open, input, (ledger) => verifyLedger({ store: open, ledger, env: {} }))
  },
  machine: async ({ store }) => {
    const open = await Store.open(store!)
    return (input) => withObject(open, input, (digest) => eachJudged([() => readMachineLayer(open, digest), () => readMachineImage(open, digest)]))
  },
  redaction: () => Promise.resolve((input) => Promise.resolve(new Redactor({ env: { API_TOKEN: 'tok-0123456789abcdef' } }).redactText(input.toString('utf8')))),
}

/**
 * Run every check on one input, so each parser sees it: throw the first error the oracle
 * does not accept; else, when no check took the input, the first refusal (exit 2 or 5).
 */
async function eachJudged(checks: Array<() => unknown>): Promise<void> {
  const refusals: unknown[] = []
  for (const check of checks) {
    try {
      await check()
    } catch (err) {
      if (judgeError(err) !== null) throw err
      refusals.push(err)
    }
  }
  if (refusals.length === checks.length) throw refusals[0]
}

/** Unpack a pack file's bytes into a store that has never held an image: the store is replaced after every unpack that lets one in. */
async function freshStoreUnpacker(scratch: string): Promise<RunInput> {
  const file = join(scratch, 'input.fpk')
  let generation = 0
  let store = await Store.init(join(scratch, `store-${generation}`))
  return async (input) => {
    await fs.writeFile(file, input)
    await unpackImage({ store, input: file })
    await fs.rm(store.root, { recursive: true, force: true })
    store = await Store.init(join(scratch, `store-${++generation}`))
  }
}

/** An object's bytes parsed strictly and checked by its kind's validator, as a store reads it. */
function validateObject(input: Buffer): void {
  const object = parseStructured(input, sha256(input))
  const validate = { snapshot: validateSnapshot, tree: validateTree, chunks: validateChunks }[object.kind]
  validate?.(object, 'fuzz object')
}

/** Every object file of a store (the seed image's blobs and structured objects). */
async function storedObjects(root: string): Promise<Buffer[]> {
  const dir = join(root, 'objects', 'sha256')
  const objects: Buffer[] = []
  for (const shard of await fs.readdir(dir)) for (const name of await fs.readdir(join(dir, shard))) objects.push(await fs.readFile(join(dir, shard, name)))
  return objects
}

/**
 * A pack file whose image holds `object`: a tree under a snapshot, a chunks object as a
 * file of a tree under a snapshot, anything else as the root itself; with the honest
 * objects beside it, so the graph checks reach what the object names.
 */
function packAround(object: Buffer, honest: Buffer[]): Buffer {
  const digest = sha256(object)
  const kind = lenientKind(object)
  const wrappers: Buffer[] = []
  if (kind.kind === 'chunks') wrappers.push(treeObject([fileEntry('big', false, kind.size, digest, true)]).bytes)
  const tree = kind.kind === 'tree' ? digest : kind.kind === 'chunks' ? sha256(wrappers[0]!) : null
  if (tree) wrappers.push(canonicalBytes(makeSnapshot({ parents: [], tree, message: 'fuzz', createdAt: new Date(0) })))
  const root = wrappers.at(-1) ?? object
  return packFile(sha256(root), [object, ...wrappers, ...honest])
}

function lenientKind(object: Buffer): { kind: unknown; size: number } {
  try {
    const value = JSON.parse(object.toString('utf8')) as { kind?: unknown; size?: unknown }
    return { kind: value?.kind, size: Number.isSafeInteger(value?.size) && (value.size as number) >= 0 ? (value.size as number) : 0 }
  } catch {
    return { kind: null, size: 0 }
  }
}

/** A pack file of distinct `objects` in one zstd frame, its header naming `root`. */
function packFile(root: Digest, objects: Buffer[]): Buffer {
  const unique = [...new Map(objects.map((o) => [sha256(o), o])).entries()]
  const body = Buffer.concat(unique.map(([, o]) => o))
  const frame = compress(body)
  let offset = 0
  const entries = unique.map(([d, o]): [Digest, number, number] => [d, (offset += o.length) - o.length, o.length])
  const index: PackIndex = { kind: 'pack-index', schemaVersion: 1, pack: sha256(frame), packSize: frame.length, frames: [[frame.length, body.length]], objects: entries }
  return Buffer.concat([encodeHeader({ kind: 'pack', schemaVersion: 2, root, shallow: [], index }), frame])
}

/** Write `input` as an object of `store`, run `use` on its digest, then remove it again unless the store held it before. */
async function withObject(store: Store, input: Buffer, use: (digest: Digest) => Promise<unknown>): Promise<unknown> {
  const digest = sha256(input)
  const held = await store.has(digest)
  await store.writeBlob(input)
  try {
    return await use(digest)
  } finally {
    if (!held) await fs.rm(store.objectPath(digest), { force: true })
  }
}
