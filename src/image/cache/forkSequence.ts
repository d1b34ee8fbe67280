import { UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { readKvCacheLayer } from './kvCacheLayer.js'
import type { LlamaModelLike, LlamaSequenceLike } from './llamaTypes.js'
import { assertLayerFits, loadStateFile, snapshotSequence, withStateFile } from './sequenceState.js'

export interface ForkSequenceArgs<T extends number> extends StoreLocator {
  /** The cache layer to fork from. */
  id: Digest
  model: LlamaModelLike<T>
  modelPath: string
  k: number
  /** Per child i, its sampling: `temperature[i]` and `seed[i]` (a list shorter than k repeats its last value; default temperature 0). */
  vary?: { temperature?: number[]; seed?: number[] }
  /** Tokens each child generates (default 32). */
  maxTokens?: number
  /** Score each continuation; the best one's state becomes a new cache layer. */
  scorer?: (child: ForkedContinuation) => number | Promise<number>
  /** llama.cpp threads per child's context (default 1: on few cores more threads contend). */
  threads?: number
}

export interface ForkedContinuation {
  index: number
  temperature: number
  seed: number | undefined
  tokens: number[]
  text: string
  /** Tokens evaluated before the first sample: the pending ones only, never the cached prompt. */
  evaluated: number
  score?: number
}

export interface ForkSequenceResult {
  children: ForkedContinuation[]
  /** With a scorer: the best child and its state as a new cache layer. */
  best?: { index: number; id: Digest }
}

/**
 * Continue K children from one KV-cache state, each in a context of its own with its own
 * sampling: the state is restored into each (its pieces checked, its model checked), the
 * pending tokens evaluated, and `maxTokens` generated; none evaluates the cached tokens
 * again. With a scorer, the best continuation's state is stored as a new cache layer.
 */
export async function forkSequence<T extends number>(args: ForkSequenceArgs<T>): Promise<ForkSequenceResult> {
  const { store } = await openStore(args)
  if (!Number.isSafeInteger(args.k) || args.k < 1) throw new UsageError(`fork: k must be a whole number of children, at least 1, not ${args.k}`)
  const layer = await readKvCacheLayer(store, args.id)
  await assertLayerFits(layer, layer.contextSize, args.modelPath) // before any context is made for it
  const pick = <V>(list: V[] | undefined, i: number, fallback: V): V => (list && list.length > 0 ? list[Math.min(i, list.length - 1)]! : fallback)
  const children: ForkedContinuation[] = []
  let best: { index: number; score: number; id: Digest } | undefined
  // the state is read, checked and written once; each child's context loads that file
  await withStateFile(store, layer, async (file) => {
    for (let index = 0; index < args.k; index++) {
      const context = await args.model.createContext({ sequences: 1, contextSize: layer.contextSize, threads: args.threads ?? 1 })
      try {
        const sequence = context.getSequence()
        await loadStateFile(sequence, file, layer)
        const temperature = pick(args.vary?.temperature, index, 0)
        const seed = pick<number | undefined>(args.vary?.seed, index, undefined)
        const tokens: T[] = []
        const pending = layer.pending as T[]
        const generator = sequence.evaluate(pending, { temperature, ...(seed !== undefined ? { seed } : {}) })
        let cut = false // stopped at maxTokens (the last token sampled, not evaluated), not at the end of generation
        for await (const token of generator) {
          tokens.push(token)
          if (tokens.length >= (args.maxTokens ?? 32)) {
            cut = true
            break
          }
        }
        const child: ForkedContinuation = { index, temperature, seed, tokens, text: args.model.detokenize(tokens), evaluated: pending.length }
        if (args.scorer) {
          child.score = await args.scorer(child)
          if (!best || child.score > best.score) {
            const saved = await snapshotSequence({ store, sequence, modelPath: args.modelPath, pending: cut ? tokens.slice(-1) : await lastTokenPending(sequence) })
            best = { index, score: child.score, id: saved.id }
          }
        }
        children.push(child)
      } finally {
        await context.dispose()
      }
    }
  })
  return { children, ...(best ? { best: { index: best.index, id: best.id } } : {}) }
}

/**
 * After generation ended by itself, every token is in the cache and no logits are left
 * to sample from: the last one is taken back out of the cache and becomes the pending
 * token a later fork evaluates.
 */
async function lastTokenPending<T extends number>(sequence: LlamaSequenceLike<T>): Promise<T[]> {
  const held = sequence.contextTokens
  await sequence.eraseContextTokenRanges([{ start: held.length - 1, end: held.length }])
  return held.slice(-1)
}
