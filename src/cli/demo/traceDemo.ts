import { promises as fs } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { DemoContext } from './DemoContext.js'

/** The agent the demo records: asks a (scripted) OpenAI-compatible model to plan, runs a tool, answers. */
const AGENT = `
const ask = async (content) => {
  const res = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
    body: JSON.stringify({ model: 'demo-model', messages: [{ role: 'system', content: process.env.SYSTEM_PROMPT }, { role: 'user', content }] }),
  })
  return (await res.json()).choices[0].message.content
}
const plan = await ask('fix add() in calc.js')
const check = await ask('plan was: ' + plan + '. what test proves it?')
console.log('agent says:', check)
`

/** A scripted model on 127.0.0.1: its answer depends on the system prompt, like a real one would. */
async function scriptedModel(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      const messages = (JSON.parse(body) as { messages: Array<{ content: string }> }).messages
      const terse = messages[0]!.content.includes('terse')
      const content = messages[1]!.content.startsWith('fix') ? (terse ? 'swap - for +' : 'change the minus in add() to a plus') : 'add(2, 3) === 5'
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id: `chatcmpl-${Date.now()}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` }
}

/** Record an agent run, replay it with the model gone and no network, change the agent, diff to the first divergence. */
export async function traceDemo(ctx: DemoContext): Promise<void> {
  const lib = await import('../../index.js')
  const dir = join(ctx.root, 'trace')
  await fs.mkdir(dir, { recursive: true })
  await fs.writeFile(join(dir, 'agent.mjs'), AGENT)
  await lib.initWorkspace({ dir })
  const model = await scriptedModel()
  const env = { ...process.env, OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'sk-demo-0123456789abcdefSECRET', SYSTEM_PROMPT: 'you are a careful coding agent' }
  const command = [process.execPath, 'agent.mjs']

  ctx.say('Record an agent run (every LLM call captured in-process, secrets redacted)')
  const first = await lib.recordCommand({ dir, command, env, stdout: 'capture' })
  ctx.show(`${first.agentStdout.trim()}\nrecorded ${first.runId}: ${first.run.steps.map((s) => `${s.type} ${s.name}`).join(', ')}`)
  ctx.check(!JSON.stringify(first.run).includes('SECRET'), 'the API key is nowhere in the recording')

  ctx.say('Replay it offline: the model is stopped, the agent runs in its own network namespace')
  await new Promise((r) => model.server.close(r))
  const replay = await lib.replayRun({ run: first.run, dir, env, stdout: 'capture' })
  ctx.show(`${replay.agentStdout.trim()}\n${replay.served}/${replay.steps} steps served from the recording (${replay.isolation})`)
  ctx.check(replay.agentStdout === first.agentStdout && replay.diff.status === 'exact_match', 'the replay is identical to the recording')

  ctx.say('Change the agent (a terser system prompt), record again, diff the runs')
  const again = await scriptedModel()
  const second = await lib.recordCommand({ dir, command, env: { ...env, OPENAI_BASE_URL: again.url, SYSTEM_PROMPT: 'you are a terse coding agent' }, stdout: 'capture' })
  await new Promise((r) => again.server.close(r))
  const diff = lib.diffRuns({ a: first.run, b: second.run })
  ctx.show(lib.renderRunDiff(diff))
  ctx.check(diff.status === 'input_divergence' && diff.idxA === 0, 'first divergence found at step 0: the system prompt changed')
}
