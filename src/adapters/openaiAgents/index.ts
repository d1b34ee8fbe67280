import { Usage } from '@openai/agents'
import type { Model, ModelProvider, ModelRequest, ModelResponse, Span, StreamEvent, Trace, TracingProcessor } from '@openai/agents'
import type { JsonValue, StepType } from '../../objects/Run.js'
import { Recorder, type RecorderOptions } from '../../trace/record/Recorder.js'
import { decode, encode } from '../jsonCodec.js'
import { startModelCall } from '../modelCall.js'

export { recordModel, type ModelRecordingMode, type RecordModelOptions } from '../recordModel.js'

/**
 * A ModelProvider whose models record each call as an `llm` step of `recorder`'s run
 * and, when the recorder replays, answer from the recording without calling the model
 * (a streamed response is played back event by event).
 *
 * @example
 * const runner = new Runner({ modelProvider: recordingModelProvider({ provider: new OpenAIProvider(), recorder }) })
 */
export function recordingModelProvider({ provider, recorder }: { provider: ModelProvider; recorder: Recorder }): ModelProvider {
  return {
    async getModel(name?: string) {
      return recordingModel(await provider.getModel(name), name || 'default', recorder)
    },
  }
}

function recordingModel(model: Model, name: string, recorder: Recorder): Model {
  return {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const call = await startModelCall(recorder, `${name} response`, requestInput(request), () => model.getResponse(request))
      if ('served' in call) return revive(decode(call.served) as ModelResponse)
      call.end(encode(call.live))
      return call.live
    },
    async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
      const call = await startModelCall(recorder, `${name} stream`, requestInput(request), async () => model.getStreamedResponse(request)[Symbol.asyncIterator]())
      if ('served' in call) {
        for (const event of decode(call.served) as StreamEvent[]) yield event
        return
      }
      const events = call.live
      const seen: JsonValue[] = []
      let read = false
      try {
        for (let next = await events.next(); !next.done; next = await events.next()) {
          seen.push(encode(next.value))
          yield next.value
        }
        read = true
      } catch (err) {
        call.fail(err)
        throw err
      } finally {
        // the runner stopped reading (a guardrail tripped, an error): stop the model's stream too; the step keeps what was read
        if (!read) await events.return?.()
        call.end(seen)
        await call.written
      }
    },
  }
}

/** The request as a step input: what the model is asked, without the abort signal and the tracing switch. */
function requestInput({ signal: _signal, tracing: _tracing, ...request }: ModelRequest): JsonValue {
  return encode(request)
}

/** A recorded response with its usage a `Usage` again (the runner adds usages up). */
function revive(response: ModelResponse): ModelResponse {
  return { ...response, usage: new Usage(response.usage) }
}

/** Span kinds recorded as steps, with the step type each becomes; the others (agent, task, turn) only group. */
const STEP_TYPES: Partial<Record<string, StepType>> = {
  generation: 'llm',
  response: 'llm',
  transcription: 'llm',
  speech: 'llm',
  function: 'tool',
  mcp_tools: 'tool',
  handoff: 'step',
  guardrail: 'step',
  custom: 'step',
}

/**
 * A TracingProcessor that writes each trace as a run of the store (`entrypoint`: the
 * trace's name): every generation, response, function call, handoff, guardrail and
 * custom span becomes a step, in the order the spans end, with its error if it failed.
 * Register it with `addTraceProcessor` (beside OpenAI's exporter) or `setTraceProcessors`.
 */
export function forkpointTraceProcessor(options: Omit<RecorderOptions, 'entrypoint' | 'replay'> = {}): TracingProcessor {
  // per trace, its recorder and the chain of its writes, so steps land in the order spans end and before the run is finished
  const open = new Map<string, { queue: Promise<Recorder>; failed: boolean }>()
  const finishing = new Set<Promise<unknown>>()
  const append = (traceId: string, write: (recorder: Recorder) => Promise<unknown>) => {
    const entry = open.get(traceId)
    if (entry) entry.queue = quiet(entry.queue.then(async (recorder) => (await write(recorder), recorder)))
  }
  const finish = (traceId: string, status: 'ok' | 'failed') => {
    const entry = open.get(traceId)
    if (!entry) return Promise.resolve()
    open.delete(traceId)
    const done = entry.queue.then((recorder) => recorder.finish({ status: entry.failed ? 'failed' : status }))
    finishing.add(done)
    return done.finally(() => finishing.delete(done))
  }
  return {
    async onTraceStart(trace: Trace) {
      open.set(trace.traceId, { queue: quiet(Recorder.start({ ...options, entrypoint: trace.name })), failed: false })
    },
    async onTraceEnd(trace: Trace) {
      await finish(trace.traceId, 'ok').catch((err: unknown) => warn(trace.name, err))
    },
    async onSpanStart() {},
    async onSpanEnd(span: Span<never>) {
      const data = span.spanData as { type: string } & Record<string, unknown>
      const type = STEP_TYPES[data.type]
      const entry = open.get(span.traceId)
      if (!entry || !type) return
      const { name, input, output } = describeSpan(data)
      const error = span.error
      if (error) entry.failed = true
      const run = () => (error ? Promise.reject(Object.assign(new Error(error.message), { data: error.data })) : output)
      append(span.traceId, (recorder) => recorder.step(name, input, run, type).catch(() => {})) // a failure is in the step
    },
    async shutdown() {
      await Promise.all([...open.keys()].map((traceId) => finish(traceId, 'failed').catch((err: unknown) => warn(traceId, err))))
    },
    async forceFlush() {
      await Promise.allSettled([...open.values()].map((entry) => entry.queue))
      await Promise.allSettled([...finishing])
    },
  }
}

/** A promise whose failure is reported where it is awaited (onTraceEnd), never as an unhandled rejection meanwhile. */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}

/**
 * A trace that could not be written (no store found, the run index busy) is said on
 * stderr, as the SDK's own exporter does: the SDK does not await some of a processor's
 * calls, and an agent that ran well must not fail for its trace.
 */
function warn(trace: string, err: unknown): void {
  process.stderr.write(`forkpoint: could not write trace ${JSON.stringify(trace)} as a run: ${err instanceof Error ? err.message : String(err)}\n`)
}

/** A span's step: its name, and its data split into input and output. */
function describeSpan(data: { type: string } & Record<string, unknown>): { name: string; input: JsonValue; output: JsonValue } {
  const { type, ...rest } = data
  switch (type) {
    case 'function':
      return { name: String(data['name']), input: parsedOrText(data['input']), output: parsedOrText(data['output']) }
    case 'generation':
      return { name: `generation ${String(data['model'] ?? '')}`.trim(), input: encode(data['input'] ?? null), output: encode({ output: data['output'], usage: data['usage'] }) }
    case 'response':
      return { name: 'response', input: encode(data['_input'] ?? null), output: encode({ response_id: data['response_id'], response: data['_response'] }) }
    case 'handoff':
      return { name: `handoff ${String(data['from_agent'])} -> ${String(data['to_agent'])}`, input: null, output: encode(rest) }
    default:
      return { name: `${type}${typeof data['name'] === 'string' ? ` ${data['name']}` : ''}`, input: null, output: encode(rest) }
  }
}

/** A function span's input and output are JSON text when the tool takes and gives JSON. */
function parsedOrText(value: unknown): JsonValue {
  if (typeof value !== 'string') return encode(value ?? null)
  try {
    return JSON.parse(value) as JsonValue
  } catch {
    return value
  }
}
