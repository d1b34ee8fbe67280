/**
 * ai-sdk: a support bot written with the Vercel AI SDK, its model wrapped with
 * forkpoint's middleware. The first run records the model's answers; the second replays
 * them offline (the model is never called); a third recording, where the model answers
 * differently, is diffed against the first to the call where they part.
 * (The models are the AI SDK's own mocks, so this runs offline.)   Run: npx tsx examples/adapters/aiSdk.ts
 */
import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider'
import { generateText, wrapLanguageModel } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { forkpointMiddleware, recordModel } from '../../src/adapters/aiSdk/index.js'
import { compareRuns, initWorkspace, listRuns } from '../../src/index.js'
import { tempProject } from '../workspace.js'

const usage = { inputTokens: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 4, text: 4, reasoning: 0 } }
const answering = (text: string) =>
  new MockLanguageModelV3({
    doGenerate: async (): Promise<LanguageModelV3GenerateResult> => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }),
  })
const offline = new MockLanguageModelV3({ doGenerate: () => Promise.reject(new Error('no network during replay')) })

/** The bot: one model call per question. */
async function supportBot(dir: string, model: MockLanguageModelV3, mode: 'record' | 'replay'): Promise<string[]> {
  const recorder = await recordModel({ dir, entrypoint: 'support-bot', mode })
  const wrapped = wrapLanguageModel({ model, middleware: forkpointMiddleware({ recorder }) })
  const answers: string[] = []
  for (const prompt of ['How do I reset my password?', 'Can I get a refund?']) answers.push((await generateText({ model: wrapped, prompt })).text)
  await recorder.finish()
  return answers
}

const project = await tempProject({})
try {
  await initWorkspace({ dir: project.dir })
  console.log('recorded:', await supportBot(project.dir, answering('Use the link on the login page.'), 'record'))
  console.log('replayed offline:', await supportBot(project.dir, offline, 'replay'))
  await supportBot(project.dir, answering('Please contact support.'), 'record')
  const [newer, older] = await listRuns({ dir: project.dir, entrypoint: 'support-bot' })
  const diff = await compareRuns({ dir: project.dir, a: older!.runId, b: newer!.runId, env: process.env })
  console.log(`diff of the two recordings: ${diff.status} at step ${diff.idxA}`)
} finally {
  project.done()
}
