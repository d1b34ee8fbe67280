import { UsageError } from '../../errors/index.js'
import type { LlamaModelLike } from './llamaTypes.js'

/** A model loaded on the CPU with node-llama-cpp (an optional peer), and how to let it go. */
export interface LoadedLlama {
  model: LlamaModelLike
  dispose(): Promise<void>
}

/**
 * Load a GGUF model with node-llama-cpp on the CPU, never building llama.cpp from source.
 * @throws {UsageError} when node-llama-cpp is not installed (exit 2, saying what to install)
 */
export async function loadLlama(modelPath: string): Promise<LoadedLlama> {
  let llamaCpp: typeof import('node-llama-cpp')
  try {
    llamaCpp = await import('node-llama-cpp')
  } catch {
    throw new UsageError('the KV-cache layer needs node-llama-cpp: npm i --omit=optional node-llama-cpp @node-llama-cpp/linux-x64 (its CPU build; see docs/model.md)')
  }
  const llama = await llamaCpp.getLlama({ gpu: false, build: 'never' }).catch((err: unknown) => {
    throw new UsageError(`llama.cpp has no prebuilt CPU binary here (${(err as Error).message}): install node-llama-cpp's build for this platform`)
  })
  const model = await llama.loadModel({ modelPath }).catch(async (err: unknown) => {
    await llama.dispose()
    throw new UsageError(`cannot load ${modelPath} as a GGUF model: ${(err as Error).message}`, { path: modelPath })
  })
  return {
    model: model as unknown as LlamaModelLike,
    dispose: async () => {
      await model.dispose()
      await llama.dispose()
    },
  }
}
