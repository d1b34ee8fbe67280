import type { LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { describe, expect, it } from 'vitest'
import { forkpointMiddleware, recordModel } from '../../src/adapters/aiSdk/index.js'
import { ReplayDivergenceError, UsageError, compareRuns, listRuns } from '../../src/index.js'
import { storeWorkspace } from '../helpers/workspace.js'

const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } }

function answering(text: string): MockLanguageModelV3 {
  const result: LanguageModelV3GenerateResult = {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
    response: { id: 'resp-1', timestamp: new Date('2026-11-26T10:00:00Z'), modelId: 'mock-model' },
  }
  return new MockLanguageModelV3({ doGenerate: async () => result })
}

const STREAM_PARTS: LanguageModelV3StreamPart[] = [
  { type: 'stream-start', warnings: [] },
  { type: 'response-metadata', id: 'resp-2', timestamp: new Date('2026-11-26T10:00:01Z'), modelId: 'mock-model' },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'Hello' },
  { type: 'text-delta', id: 't', delta: ', world' },
  { type: 'text-end', id: 't' },
  { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
]

function streaming(): MockLanguageModelV3 {
  return new MockLanguageModelV3({ doStream: async () => ({ stream: simulateReadableStream({ chunks: STREAM_PARTS }) }) })
}

/** A model that must not be called: replay serves every call. */
function unreachable(): MockLanguageModelV3 {
  const fail = () => Promise.reject(new Error('the model was called during replay'))
  return new MockLanguageModelV3({ doGenerate: fail, doStream: fail })
}

describe('the Vercel AI SDK middleware', () => {
  it('records generateText calls as llm steps and replays them without calling the model', async () => {
    const { dir } = await storeWorkspace()
    const recorder = await recordModel({ dir, entrypoint: 'support-bot', mode: 'record' })
    const model = wrapLanguageModel({ model: answering('Paris.'), middleware: forkpointMiddleware({ recorder }) })
    const live = await generateText({ model, prompt: 'Capital of France?' })
    expect(live.text).toBe('Paris.')
    const recorded = await recorder.finish()
    expect(recorded.kind === 'recorded' && recorded.run.steps.map((s) => [s.type, s.name])).toEqual([['llm', 'mock-provider:mock-model-id generate']])

    const replayer = await recordModel({ dir, entrypoint: 'support-bot', mode: 'replay' })
    const offline = wrapLanguageModel({ model: unreachable(), middleware: forkpointMiddleware({ recorder: replayer }) })
    const replayed = await generateText({ model: offline, prompt: 'Capital of France?' })
    expect(replayed.text).toBe('Paris.')
    expect(replayed.response.timestamp).toEqual(new Date('2026-11-26T10:00:00Z'))
    const finished = await replayer.finish()
    expect(finished.kind === 'recorded' && finished.diff?.status).toBe('exact_match')
  })

  it('replays a stream part by part, as it was recorded', async () => {
    const { dir } = await storeWorkspace()
    const recorder = await recordModel({ dir, entrypoint: 'streamer', mode: 'record' })
    const live = streamText({ model: wrapLanguageModel({ model: streaming(), middleware: forkpointMiddleware({ recorder }) }), prompt: 'Greet' })
    expect(await live.text).toBe('Hello, world')
    await recorder.finish()

    const replayer = await recordModel({ dir, entrypoint: 'streamer', mode: 'replay' })
    const seen: LanguageModelV3StreamPart[] = []
    const inner = unreachable()
    const spy = wrapLanguageModel({
      model: wrapLanguageModel({ model: inner, middleware: forkpointMiddleware({ recorder: replayer }) }),
      middleware: {
        specificationVersion: 'v3',
        async wrapStream({ doStream }) {
          const result = await doStream()
          return { ...result, stream: result.stream.pipeThrough(new TransformStream({ transform: (part, c) => (seen.push(part), c.enqueue(part)) })) }
        },
      },
    })
    const replayed = streamText({ model: spy, prompt: 'Greet' })
    expect(await replayed.text).toBe('Hello, world')
    expect(seen).toEqual(STREAM_PARTS)
    expect(inner.doStreamCalls).toHaveLength(0)
  })

  it('auto records the first time and replays after; a call the recording lacks is a divergence', async () => {
    const { dir } = await storeWorkspace()
    const first = await recordModel({ dir, entrypoint: 'auto-bot' })
    await generateText({ model: wrapLanguageModel({ model: answering('42'), middleware: forkpointMiddleware({ recorder: first }) }), prompt: 'Answer?' })
    await first.finish()
    const second = await recordModel({ dir, entrypoint: 'auto-bot' })
    const offline = wrapLanguageModel({ model: unreachable(), middleware: forkpointMiddleware({ recorder: second }) })
    expect((await generateText({ model: offline, prompt: 'Answer?' })).text).toBe('42')
    await expect(generateText({ model: offline, prompt: 'Another question?' })).rejects.toBeInstanceOf(ReplayDivergenceError)
    expect(await listRuns({ dir, entrypoint: 'auto-bot' })).toHaveLength(1) // a replay stores no run
  })

  it('passes a cancel to the model’s stream and keeps the parts read so far', async () => {
    const { dir } = await storeWorkspace()
    let cancelled = false
    const endless = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start: (c) => c.enqueue({ type: 'stream-start', warnings: [] }),
          pull: (c) => c.enqueue({ type: 'text-delta', id: 't', delta: 'more ' }),
          cancel: () => void (cancelled = true),
        }),
      }),
    })
    const recorder = await recordModel({ dir, entrypoint: 'cancelled', mode: 'record' })
    const model = wrapLanguageModel({ model: endless, middleware: forkpointMiddleware({ recorder }) })
    const { stream } = await model.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'Go on' }] }] })
    const reader = stream.getReader()
    for (let i = 0; i < 3; i++) await reader.read()
    await reader.cancel()
    expect(cancelled).toBe(true)
    const finished = await recorder.finish()
    const output = finished.kind === 'recorded' ? (finished.run.steps[0]!.output as { parts: unknown[] }) : null
    expect(output?.parts.length).toBeGreaterThanOrEqual(3)
  })

  it('auto replays the latest run that ended well, not a failed one', async () => {
    const { dir } = await storeWorkspace()
    const failed = await recordModel({ dir, entrypoint: 'flaky', mode: 'record' })
    await failed.finish({ status: 'failed' })
    const next = await recordModel({ dir, entrypoint: 'flaky' })
    const model = wrapLanguageModel({ model: answering('live'), middleware: forkpointMiddleware({ recorder: next }) })
    expect((await generateText({ model, prompt: 'Hi' })).text).toBe('live') // recorded, not replayed from the failed run
    const done = await next.finish()
    expect(done.kind === 'recorded' && done.diff).toBeNull()
  })

  it('refuses to replay when nothing was recorded', async () => {
    const { dir } = await storeWorkspace()
    await expect(recordModel({ dir, entrypoint: 'never', mode: 'replay' })).rejects.toBeInstanceOf(UsageError)
  })

  it('diffs two recorded runs to the model call where they part', async () => {
    const { dir } = await storeWorkspace()
    for (const answer of ['Paris.', 'Lyon.']) {
      const recorder = await recordModel({ dir, entrypoint: 'geo', mode: 'record' })
      await generateText({ model: wrapLanguageModel({ model: answering(answer), middleware: forkpointMiddleware({ recorder }) }), prompt: 'Capital of France?' })
      await recorder.finish()
    }
    const [newer, older] = await listRuns({ dir, entrypoint: 'geo' })
    const diff = await compareRuns({ dir, a: older!.runId, b: newer!.runId, env: {} })
    expect(diff).toMatchObject({ status: 'output_divergence', idxA: 0, idxB: 0 })
  })
})
