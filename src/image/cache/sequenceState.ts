import { promises as fs, writeFileSync } from 'node:fs'
import { MalformedObjectError, UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { Store } from '../../store/Store.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import type { KvCacheLayer } from '../../objects/KvCacheLayer.js'
import { modelSha256, readKvCacheLayer, readState, storeState } from './kvCacheLayer.js'
import type { LlamaSequenceLike } from './llamaTypes.js'

export interface SnapshotSequenceArgs<T extends number> extends StoreLocator {
  sequence: LlamaSequenceLike<T>
  /** The GGUF file the sequence's model was loaded from: the state is tied to it. */
  modelPath: string
  /** Tokens not yet in the cache to evaluate before the next one is sampled: the last generated token, or a prompt's last (`prefill`). */
  pending: readonly number[]
}

export interface SnapshotSequenceResult {
  /** The cache layer object. */
  id: Digest
  tokens: number
  /** The state file's size, and how many of its bytes the store did not hold already. */
  stateBytes: number
  newBytes: number
}

/** Store a live sequence's KV-cache as a cache layer object (the state file in content-defined pieces, shared with earlier states of the same conversation). */
export async function snapshotSequence<T extends number>(args: SnapshotSequenceArgs<T>): Promise<SnapshotSequenceResult> {
  const { store } = await openStore(args)
  if (args.pending.length === 0) throw new UsageError('snapshotSequence: no pending token: a state holds no logits, so the next sample needs one token to evaluate (use prefill)')
  const modelSha = await modelSha256(args.modelPath)
  const file = store.tempPath('kv-state')
  try {
    await args.sequence.saveStateToFile(file)
    const bytes = await fs.readFile(file)
    const { digest: state, newBytes } = await storeState(store, bytes, args.sequence.contextTokens.length)
    const layer: KvCacheLayer = {
      kind: 'kv-cache',
      schemaVersion: 1,
      modelSha256: modelSha,
      contextSize: args.sequence.contextSize,
      tokens: [...args.sequence.contextTokens],
      pending: [...args.pending],
      state,
    }
    const id = await store.writeBlob(canonicalBytes(layer))
    await store.sync()
    return { id, tokens: layer.tokens.length, stateBytes: bytes.length, newBytes }
  } finally {
    await fs.rm(file, { force: true })
  }
}

export interface RestoreSequenceArgs<T extends number> extends StoreLocator {
  /** A cache layer object. */
  id: Digest
  /** A sequence of a fresh context (one sequence, as the state was saved from) of the same model. */
  sequence: LlamaSequenceLike<T>
  modelPath: string
}

/**
 * Load a cache layer into a sequence: refused (UsageError, exit 2) for another model or a
 * smaller context, and every piece of the state checked against its digest before
 * llama.cpp reads a byte of it (a changed one: DigestMismatchError, exit 5). Returns the
 * tokens now in the cache and the pending ones to evaluate next.
 */
export async function restoreSequence<T extends number>(args: RestoreSequenceArgs<T>): Promise<{ tokens: number[]; pending: number[] }> {
  const { store } = await openStore(args)
  const layer = await readKvCacheLayer(store, args.id)
  await loadInto(store, layer, args.sequence, args.modelPath)
  return { tokens: layer.tokens, pending: layer.pending }
}

/**
 * The checks and the load, for a layer already read. A layer from someone else's image is
 * checked for integrity (every piece), for its model and for sizes that make sense; the
 * state's own format is llama.cpp's to parse, and a state it refuses is exit 5.
 */
export async function loadInto<T extends number>(store: Store, layer: KvCacheLayer, sequence: LlamaSequenceLike<T>, modelPath: string): Promise<void> {
  await assertLayerFits(layer, sequence.contextSize, modelPath)
  await withStateFile(store, layer, (file) => loadStateFile(sequence, file, layer))
}

/** The layer's state as a file llama.cpp can load, every piece checked first, for `use` (K children load one file); removed after. */
export async function withStateFile<R>(store: Store, layer: KvCacheLayer, use: (file: string) => Promise<R>): Promise<R> {
  const bytes = await readState(store, layer.state)
  const file = store.tempPath('kv-restore')
  try {
    writeFileSync(file, bytes, { mode: 0o600 }) // one write of a few MB: the thread pool's chunked writes took twice as long
    return await use(file)
  } finally {
    await fs.rm(file, { force: true })
  }
}

/** Load a state file `withStateFile` wrote into a sequence of a fresh context; a state llama.cpp refuses is MalformedObjectError (exit 5). */
export async function loadStateFile<T extends number>(sequence: LlamaSequenceLike<T>, file: string, layer: KvCacheLayer): Promise<void> {
  await sequence.loadStateFromFile(file, { acceptRisk: true }).catch((err: unknown) => {
    throw new MalformedObjectError(`llama.cpp refused the cache layer's state ${layer.state}: ${(err as Error).message}`, { digest: layer.state })
  })
}

/** The layer was made with this model, and its tokens fit a context of `contextSize`: UsageError (exit 2) if not. */
export async function assertLayerFits(layer: KvCacheLayer, contextSize: number, modelPath: string): Promise<void> {
  const model = await modelSha256(modelPath)
  if (model !== layer.modelSha256)
    throw new UsageError(`the cache layer was made with the model whose sha256 is ${layer.modelSha256}, not ${modelPath} (${model}): loading it there could crash llama.cpp`, {
      expected: layer.modelSha256,
      actual: model,
    })
  if (contextSize < layer.tokens.length + layer.pending.length)
    throw new UsageError(`the cache layer holds ${layer.tokens.length} tokens; a context of ${contextSize} cannot take them`, { contextSize })
}

/**
 * Evaluate a prompt into a sequence up to its last token, which is left pending: the
 * point to snapshot a sequence at before sampling (a state holds no logits, so the
 * last token is the one evaluated again after a restore).
 */
export async function prefill<T extends number>(sequence: LlamaSequenceLike<T> & { evaluateWithoutGeneratingNewTokens(tokens: T[]): Promise<void> }, tokens: T[]): Promise<T[]> {
  if (tokens.length === 0) throw new UsageError('prefill: no tokens')
  await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(0, -1))
  return tokens.slice(-1)
}
