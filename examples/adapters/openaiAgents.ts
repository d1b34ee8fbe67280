/**
 * openai-agents: an agent written with the OpenAI Agents SDK, with a weather tool. Its
 * model provider is wrapped so the model calls are recorded, then replayed offline (the
 * model is never called on the second run); forkpoint's trace processor writes each
 * trace, tool calls included, as a run.
 * (The model is a scripted one, so this runs offline.)   Run: npx tsx examples/adapters/openaiAgents.ts
 */
import { Agent, type Model, type ModelRequest, type ModelResponse, Runner, Usage, getGlobalTraceProvider, setTraceProcessors, setTracingDisabled, tool } from '@openai/agents'
import { z } from 'zod'
import { forkpointTraceProcessor, recordModel, recordingModelProvider } from '../../src/adapters/openaiAgents/index.js'
import { initWorkspace, listRuns, loadRun } from '../../src/index.js'
import { tempProject } from '../workspace.js'

function notStreamed(): never {
  throw new Error('not used here')
}

/** Asks for the weather, then says what the tool told it. */
const scripted: Model = {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const told = Array.isArray(request.input) && request.input.find((item) => (item as { type?: string }).type === 'function_call_result')
    const usage = new Usage({ requests: 1, inputTokens: 12, outputTokens: 6, totalTokens: 18 })
    if (!told) return { usage, output: [{ type: 'function_call', callId: 'c1', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' }] }
    const result = (told as { output?: { text?: string } }).output?.text ?? ''
    return { usage, output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `The weather: ${result}.` }] }] }
  },
  getStreamedResponse: notStreamed,
}
const offline: Model = { getResponse: () => Promise.reject(new Error('no network during replay')), getStreamedResponse: notStreamed }
const weather = tool({ name: 'weather', description: 'the weather in a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `snow in ${city}` })
const agent = new Agent({ name: 'forecaster', instructions: 'Say the weather.', tools: [weather] })

const project = await tempProject({})
try {
  await initWorkspace({ dir: project.dir })
  for (const [mode, model] of [
    ['record', scripted],
    ['replay', offline],
  ] as const) {
    const recorder = await recordModel({ dir: project.dir, entrypoint: 'forecaster', mode })
    const runner = new Runner({ modelProvider: recordingModelProvider({ provider: { getModel: () => model }, recorder }), tracingDisabled: true })
    console.log(`${mode}: ${String((await runner.run(agent, 'Weather in Oslo?')).finalOutput)}`)
    await recorder.finish()
  }

  setTraceProcessors([forkpointTraceProcessor({ dir: project.dir })])
  setTracingDisabled(false)
  await new Runner({ modelProvider: { getModel: () => scripted }, workflowName: 'traced-forecast' }).run(agent, 'Weather in Oslo?')
  await getGlobalTraceProvider().forceFlush()
  const [traced] = await listRuns({ dir: project.dir, entrypoint: 'traced-forecast' })
  const run = await loadRun({ dir: project.dir, spec: traced!.runId })
  console.log(`traced run: ${run.steps.map((s) => `${s.type} ${s.name}`).join(', ')}`)
} finally {
  project.done()
}
