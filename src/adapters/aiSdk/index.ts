import type { LanguageModelV3GenerateResult, LanguageModelV3Middleware, LanguageModelV3StreamPart, LanguageModelV3StreamResult } from '@ai-sdk/provider'
import { UsageError } from '../../errors/index.js'
import type { JsonValue } from '../../trace/core/Run.js'
import { Recorder, type RecorderOptions } from '../../trace/record/Recorder.js'
import { decode, encode } from './codec.js'

export type ModelRecordingMode = 'record' | 'replay' | 'auto'

export interface RecordModelOptions extends Omit<RecorderOptions, 'replay'> {
  /** record: call the model and record; replay: serve every call from the latest run of `entrypoint` (none there: an error); auto: replay when there is one, else record. */
  mode?: ModelRecordingMode
}

/**
 * A Recorder for model calls in the mode asked. Replay serves the latest recorded run of
 * the entrypoint, in process: the model is not called, and a call the recording lacks
 * is an error (ReplayDivergenceError, exit 3). `finish()` stores the run (record) or
 * compares it with the recording (replay).
 */
export async function recordModel({ mode = 'auto', ...options }: RecordModelOptions): Promise<Recorder> {
  if (mode === 'record') return Recorder.start(options)
  const { listRuns } = await import('../../trace/core/listRuns.js')
  const [latest] = await listRuns({ dir: options.dir, store: options.store, entrypoint: options.entrypoint, limit: 1 })
  if (!latest) {
    if (mode === 'auto') return Recorder.start(options)
    throw new UsageError(`no recorded run of ${JSON.stringify(options.entrypoint)} to replay: record one first (mode 'record' or 'auto')`, {
      name: options.entrypoint,
    })
  }
  const { loadRun } = await import('../../trace/core/loadRun.js')
  return Recorder.start({ ...options, replay: await loadRun({ dir: options.dir, store: options.store, spec: latest.runId }) })
}

/** What a recorded stream keeps: its parts, then what came with it. */
interface RecordedStream {
  parts: JsonValue
  rest: JsonValue
}

/**
 * Middleware for `wrapLanguageModel` that records each generate and stream call as an
 * `llm` step of `recorder`'s run (the call's parameters as input, its result as output)
 * and, when the recorder replays, returns the recorded result without calling the
 * model; a recorded stream is played back part by part.
 *
 * @example
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: forkpointMiddleware({ recorder }) })
 */
export function forkpointMiddleware({ recorder }: { recorder: Recorder }): LanguageModelV3Middleware {
  return {
    specificationVersion: 'v3',
    async wrapGenerate({ doGenerate, params, model }) {
      let live: LanguageModelV3GenerateResult | undefined
      // the call's parameters are the input (encode leaves the abort signal out)
      const output = await recorder.llm(stepName(model, 'generate'), encode(params), async () => encode((live = await doGenerate())))
      return live ?? (decode(output) as LanguageModelV3GenerateResult)
    },
    async wrapStream({ doStream, params, model }) {
      let started: ((result: LanguageModelV3StreamResult) => void) | undefined
      const live = new Promise<LanguageModelV3StreamResult>((resolve) => (started = resolve))
      const recorded = recorder.llm(stepName(model, 'stream'), encode(params), async (): Promise<RecordedStream> => {
        const { stream, ...rest } = await doStream()
        const [forCaller, forRun] = stream.tee()
        started!({ stream: forCaller, ...rest })
        const parts: JsonValue[] = []
        for await (const part of forRun as unknown as AsyncIterable<LanguageModelV3StreamPart>) parts.push(encode(part))
        return { parts, rest: encode(rest) }
      })
      // a live stream's step ends when the stream does, which the caller awaits by reading it; its failure is in the run
      recorded.catch(() => {})
      const first = await Promise.race([live, recorded.then((served) => ({ served }))])
      if (!('served' in first)) return first
      return { ...(decode(first.served.rest) as object), stream: playBack(decode(first.served.parts) as LanguageModelV3StreamPart[]) }
    },
  }
}

/** The step's name: which model, which kind of call (the name is part of what replay matches). */
function stepName(model: { provider: string; modelId: string }, kind: 'generate' | 'stream'): string {
  return `${model.provider}:${model.modelId} ${kind}`
}

function playBack(parts: LanguageModelV3StreamPart[]): ReadableStream<LanguageModelV3StreamPart> {
  let next = 0
  return new ReadableStream<LanguageModelV3StreamPart>({
    pull(controller) {
      if (next < parts.length) controller.enqueue(parts[next++]!)
      else controller.close()
    },
  })
}
