/**
 * What forkpoint uses of node-llama-cpp (an optional peer), structurally: a
 * `LlamaContextSequence` and `LlamaModel` of node-llama-cpp 3 satisfy these, and a user
 * without node-llama-cpp sees no type of it. `T` is node-llama-cpp's branded `Token`.
 */
export interface LlamaSequenceLike<T extends number = number> {
  readonly contextTokens: T[]
  readonly contextSize: number
  saveStateToFile(filePath: string): Promise<unknown>
  loadStateFromFile(filePath: string, acceptRisk: { acceptRisk: true }): Promise<void>
  evaluate(tokens: T[], options?: { temperature?: number; seed?: number }): AsyncGenerator<T, void, void | T | T[]>
  eraseContextTokenRanges(ranges: Array<{ start: number; end: number }>): Promise<void>
}

export interface LlamaModelLike<T extends number = number> {
  detokenize(tokens: readonly T[]): string
  createContext(options: { sequences: 1; contextSize: number; threads?: number }): Promise<{ getSequence(): LlamaSequenceLike<T>; dispose(): Promise<void> }>
}
