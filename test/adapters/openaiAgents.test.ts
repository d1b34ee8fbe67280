import {
  Agent,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  Runner,
  getGlobalTraceProvider,
  type StreamEvent,
  Usage,
  setTraceProcessors,
  setTracingDisabled,
  tool,
  withGenerationSpan,
} from '@openai/agents'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { forkpointTraceProcessor, recordModel, recordingModelProvider } from '../../src/adapters/openaiAgents/index.js'
import { ReplayDivergenceError, compareRuns, listRuns, loadRun } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

const message = (text: string) => ({ type: 'message' as const, role: 'assistant' as const, status: 'completed' as const, content: [{ type: 'output_text' as const, text }] })
const usage = () => new Usage({ requests: 1, inputTokens: 7, outputTokens: 3, totalTokens: 10 })

/** A model that asks for the weather tool first, then answers with what it was told. */
class ScriptedModel implements Model {
  calls = 0
  constructor(private readonly answer: string) {}

  /** As a provider's model does, inside a generation span that says what went in and came out. */
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    return withGenerationSpan(async (span) => {
      this.calls++
      const told = Array.isArray(request.input) && request.input.some((item) => (item as { type?: string }).type === 'function_call_result')
      const output = told
        ? [message(this.answer)]
        : [{ type: 'function_call' as const, callId: 'call-1', name: 'weather', arguments: JSON.stringify({ city: 'Paris' }), status: 'completed' as const }]
      span.spanData.model = 'scripted'
      span.spanData.input = Array.isArray(request.input) ? (request.input as Array<Record<string, unknown>>) : [{ role: 'user', content: request.input }]
      span.spanData.output = output
      return { usage: usage(), output, responseId: `resp-${this.calls}` }
    })
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const response = await this.getResponse(request)
    yield { type: 'response_started' }
    for (const part of ['It is ', 'sunny.']) yield { type: 'output_text_delta', delta: part }
    yield {
      type: 'response_done',
      response: { id: response.responseId!, usage: { requests: 1, inputTokens: 7, outputTokens: 3, totalTokens: 10 }, output: response.output as never },
    }
  }
}

const provider = (model: Model): ModelProvider => ({ getModel: () => model })
const offline: Model = {
  getResponse: () => Promise.reject(new Error('the model was called during replay')),
  getStreamedResponse: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('the model was called during replay')) }) }),
}
const weather = tool({ name: 'weather', description: 'the weather in a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` })
const agent = () => new Agent({ name: 'forecaster', instructions: 'Say the weather.', tools: [weather] })

afterAll(() => setTraceProcessors([]))

describe('the OpenAI Agents model provider', () => {
  it('records each model call as an llm step and replays the run without calling the model', async () => {
    setTraceProcessors([])
    const { dir } = await storeWorkspace()
    const model = new ScriptedModel('Sunny in Paris.')
    const recorder = await recordModel({ dir, entrypoint: 'forecaster', mode: 'record' })
    const live = await new Runner({ modelProvider: recordingModelProvider({ provider: provider(model), recorder }), tracingDisabled: true }).run(agent(), 'Weather in Paris?')
    expect(live.finalOutput).toBe('Sunny in Paris.')
    expect(model.calls).toBe(2)
    const recorded = await recorder.finish()
    expect(recorded.kind === 'recorded' && recorded.run.steps.map((s) => [s.type, s.name])).toEqual([
      ['llm', 'default response'],
      ['llm', 'default response'],
    ])

    const replayer = await recordModel({ dir, entrypoint: 'forecaster', mode: 'replay' })
    const replayed = await new Runner({ modelProvider: recordingModelProvider({ provider: provider(offline), recorder: replayer }), tracingDisabled: true }).run(
      agent(),
      'Weather in Paris?',
    )
    expect(replayed.finalOutput).toBe('Sunny in Paris.')
    expect(replayed.state.usage.totalTokens).toBe(20) // the recorded usages, added up as live ones are
    const finished = await replayer.finish()
    expect(finished.kind === 'recorded' && finished.diff?.status).toBe('exact_match')
  })

  it('replays a streamed run event by event', async () => {
    const { dir } = await storeWorkspace()
    const recorder = await recordModel({ dir, entrypoint: 'streamer', mode: 'record' })
    const runner = new Runner({ modelProvider: recordingModelProvider({ provider: provider(new ScriptedModel('It is sunny.')), recorder }), tracingDisabled: true })
    const live = await runner.run(agent(), 'Weather?', { stream: true })
    const liveText = await collectText(live.toTextStream())
    await live.completed
    await recorder.finish()

    const replayer = await recordModel({ dir, entrypoint: 'streamer', mode: 'replay' })
    const offlineRunner = new Runner({ modelProvider: recordingModelProvider({ provider: provider(offline), recorder: replayer }), tracingDisabled: true })
    const replayed = await offlineRunner.run(agent(), 'Weather?', { stream: true })
    expect(await collectText(replayed.toTextStream())).toBe(liveText)
    await replayed.completed
    expect(replayed.finalOutput).toBe(live.finalOutput)
  })

  it('refuses, on replay, a model call the recording lacks', async () => {
    const { dir } = await storeWorkspace()
    const recorder = await recordModel({ dir, entrypoint: 'strict' })
    await new Runner({ modelProvider: recordingModelProvider({ provider: provider(new ScriptedModel('ok')), recorder }), tracingDisabled: true }).run(agent(), 'One')
    await recorder.finish()
    const replayer = await recordModel({ dir, entrypoint: 'strict' })
    const offlineRunner = new Runner({ modelProvider: recordingModelProvider({ provider: provider(offline), recorder: replayer }), tracingDisabled: true })
    await expect(offlineRunner.run(agent(), 'Another question')).rejects.toBeInstanceOf(ReplayDivergenceError)
  })
})

describe('the OpenAI Agents stream wrapper', () => {
  it('stops the model’s stream when the caller stops reading', async () => {
    const { dir } = await storeWorkspace()
    let stopped = false
    const endless: Model = {
      getResponse: () => Promise.reject(new Error('not used')),
      async *getStreamedResponse() {
        try {
          for (;;) yield { type: 'output_text_delta', delta: 'more ' }
        } finally {
          stopped = true
        }
      },
    }
    const recorder = await recordModel({ dir, entrypoint: 'stopped', mode: 'record' })
    const model = await recordingModelProvider({ provider: provider(endless), recorder }).getModel('m')
    let read = 0
    for await (const event of model.getStreamedResponse({} as ModelRequest)) if (event.type === 'output_text_delta' && ++read === 3) break
    expect(stopped).toBe(true)
    const finished = await recorder.finish()
    expect(finished.kind === 'recorded' && finished.run.steps.map((s) => s.name)).toEqual(['m stream'])
  })
})

describe('the OpenAI Agents trace processor', () => {
  it('says on stderr when it cannot write a trace, and the agent still succeeds', async () => {
    const nowhere = tempDir('no-store')
    const said: string[] = []
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (said.push(String(chunk)), true))
    try {
      setTraceProcessors([forkpointTraceProcessor({ dir: nowhere })])
      setTracingDisabled(false)
      const result = await new Runner({ modelProvider: provider(new ScriptedModel('fine')), workflowName: 'unwritable' }).run(agent(), 'Weather?')
      await getGlobalTraceProvider().forceFlush()
      expect(result.finalOutput).toBe('fine')
    } finally {
      setTracingDisabled(true)
      setTraceProcessors([])
      write.mockRestore()
    }
    expect(said.join('')).toMatch(/^forkpoint: could not write trace "unwritable" as a run: /m)
  })

  it('writes each trace as a run: model calls as llm steps, tool calls as tool steps; two runs diff to where they part', async () => {
    const { dir } = await storeWorkspace()
    setTraceProcessors([forkpointTraceProcessor({ dir })])
    setTracingDisabled(false) // the SDK turns tracing off by default under NODE_ENV=test
    for (const answer of ['Sunny in Paris.', 'Rainy in Paris.']) {
      const runner = new Runner({ modelProvider: provider(new ScriptedModel(answer)), workflowName: 'weather-workflow', tracingDisabled: false })
      await runner.run(agent(), 'Weather in Paris?')
    }
    await getGlobalTraceProvider().forceFlush()
    setTracingDisabled(true)
    setTraceProcessors([])
    const runs = await listRuns({ dir, entrypoint: 'weather-workflow' })
    expect(runs).toHaveLength(2)
    const run = await loadRun({ dir, spec: runs[1]!.runId })
    expect(run.status).toBe('ok')
    expect(run.steps.map((s) => [s.type, s.name])).toEqual([
      ['llm', 'generation scripted'],
      ['tool', 'weather'],
      ['llm', 'generation scripted'],
    ])
    const toolStep = run.steps[1]!
    expect([toolStep.input, toolStep.output]).toEqual([{ city: 'Paris' }, 'sunny in Paris'])
    const diff = await compareRuns({ dir, a: runs[1]!.runId, b: runs[0]!.runId, env: {} })
    expect(diff).toMatchObject({ status: 'output_divergence', idxA: 2 })
  })
})

async function collectText(stream: AsyncIterable<string> | ReadableStream<string>): Promise<string> {
  let text = ''
  for await (const chunk of stream as AsyncIterable<string>) text += chunk
  return text
}
