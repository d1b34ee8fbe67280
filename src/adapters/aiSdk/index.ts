import type { LanguageModelV3GenerateResult, LanguageModelV3Middleware, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import type { JsonValue } from '../../objects/Run.js'
import type { Recorder } from '../../trace/record/Recorder.js'
import { startModelCall } from '../modelCall.js'
import { decode, encode } from '../jsonCodec.js'

export { recordModel, type ModelRecordingMode, type RecordModelOptions } from '../recordModel.js'

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
    // the call's parameters are the input (encode leaves the abort signal out)
    async wrapGenerate({ doGenerate, params, model }) {
      const call = await startModelCall(recorder, stepName(model, 'generate'), encode(params), doGenerate)
      if ('served' in call) return decode(call.served) as LanguageModelV3GenerateResult
      call.end(encode(call.live))
      return call.live
    },
    async wrapStream({ doStream, params, model }) {
      const call = await startModelCall(recorder, stepName(model, 'stream'), encode(params), doStream)
      if ('served' in call) {
        const { parts, rest } = call.served as unknown as RecordedStream
        return { ...(decode(rest) as object), stream: playBack(decode(parts) as LanguageModelV3StreamPart[]) }
      }
      const { stream, ...rest } = call.live
      return {
        ...rest,
        stream: recording(
          stream,
          (parts) => call.end({ parts, rest: encode(rest) }),
          (err) => call.fail(err),
        ),
      }
    },
  }
}

/**
 * The stream the caller reads: each part as it comes from the model, kept for the run.
 * The run gets the parts when the stream ends, or the ones read when the caller cancels
 * (the cancel reaches the model's stream).
 */
function recording(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  done: (parts: JsonValue[]) => void,
  failed: (err: unknown) => void,
): ReadableStream<LanguageModelV3StreamPart> {
  const reader = stream.getReader()
  const parts: JsonValue[] = []
  return new ReadableStream<LanguageModelV3StreamPart>({
    async pull(controller) {
      try {
        const next = await reader.read()
        if (next.done) {
          controller.close()
          done(parts)
          return
        }
        parts.push(encode(next.value))
        controller.enqueue(next.value)
      } catch (err) {
        controller.error(err)
        failed(err)
      }
    },
    async cancel(reason) {
      await reader.cancel(reason)
      done(parts)
    },
  })
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
