import { spawn } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { commitOutbox } from '../../effects/outbox.js'
import { traceLayer } from '../../image/traceLayer.js'
import { makeSnapshot } from '../../objects/Snapshot.js'
import { scanWorkspace } from '../../world/scan/scanWorkspace.js'
import type { DemoContext } from './DemoContext.js'

/** The agent's conversation so far, OpenAI-style chat messages (one JSON object a line). */
const CONVERSATION = [
  { role: 'system', content: 'You are a support agent. Resolve tickets in inbox/.' },
  { role: 'user', content: 'Please handle ticket 42.' },
  { role: 'assistant', content: 'Looking the customer up in the CRM.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'crm.lookup', arguments: '{"ticket":42}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: '{"customer":"ada@example.com","plan":"pro"}' },
]

/**
 * The four scripted agents, one per fork (FORKPOINT_ATTEMPT): each writes its answer into
 * its branch; two of them also email the customer through the local mail service (their
 * requests are deferred: the branch is speculative); one gives up. Each prints its score.
 */
const AGENT = `
const fs = require('node:fs')
const i = Number(process.env.FORKPOINT_ATTEMPT)
const email = async (key, text) => {
  const res = await fetch(process.env.DEMO_MAIL_URL, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ to: 'ada@example.com', text }) })
  const body = await res.json()
  console.log('email ' + key + ': HTTP ' + res.status + (body.forkpoint ? ' (deferred: ' + body.forkpoint.message + ')' : ''))
}
const plans = [
  async () => { fs.writeFileSync('reply.md', 'We are looking into it.\\n'); return 1 },
  async () => { fs.writeFileSync('reply.md', 'Refund issued for ticket 42.\\n'); await email('ticket-42-refund', 'Your refund is on its way.'); return 3 },
  async () => { fs.writeFileSync('escalation.md', 'Escalated ticket 42 to billing.\\n'); await email('ticket-42-escalation', 'We escalated your ticket.'); return 2 },
  async () => { console.log('gave up'); process.exit(1) },
]
plans[i]().then((score) => console.log('score ' + score))
`

/** A mail service on 127.0.0.1 that counts the emails it receives. */
async function startMailService(): Promise<{ url: string; received: string[]; server: Server }> {
  const received: string[] = []
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received.push(String(req.headers['idempotency-key']))
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ id: `mail-${received.length}` }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/send`, received, server }
}

/** ProcessFork's 60-second story with real layers: snapshot an agent, fork it 4 ways, let them diverge, merge the winner, one email sent. */
export async function imageDemo(ctx: DemoContext): Promise<void> {
  const lib = await import('../../index.js')
  const dir = join(ctx.root, 'agent')
  await fs.mkdir(join(dir, 'inbox'), { recursive: true })
  await fs.writeFile(join(dir, 'inbox', 'ticket-42.md'), '# Ticket 42\nCharged twice for March.\n')
  await fs.writeFile(join(dir, 'notes.md'), '# Notes\n')
  await lib.initWorkspace({ dir })
  const ws = await lib.Workspace.open({ dir })
  const store = ws.store
  const mail = await startMailService()
  try {
    ctx.say('Snapshot an agent: its files, its conversation and its ledger of side effects, one id')
    const conversation = join(ctx.root, 'conversation.jsonl')
    await fs.writeFile(conversation, CONVERSATION.map((m) => JSON.stringify(m)).join('\n') + '\n')
    const effects = await lib.openEffects({ store, env: process.env })
    const lookup = effects.tool('crm.lookup', (q: { ticket: number }) => ({ ticket: q.ticket, customer: 'ada@example.com', plan: 'pro' }), {
      class: 'idempotent',
      key: (q) => `crm:${q.ticket}`,
    })
    await lookup({ ticket: 42 })
    const base = await lib.snapshotAgent({ dir, trace: conversation, effects: await effects.ledger(), agent: 'support-agent', message: 'before the fork' })
    ctx.show(`image ${base.id}\n  world: ${base.files} files   trace: ${CONVERSATION.length} messages   effects: 1 entry (crm.lookup, executed)`)

    ctx.say('Fork it 4 ways')
    const forks = await lib.forkImage({ store, id: base.id, n: 4, env: process.env })
    ctx.show(forks.map((f) => `fork ${f.index}: ${f.id.slice(0, 19)}  (${f.ref})`).join('\n'))
    const branches = await Promise.all(forks.map((f) => ws.branch(`fork-${f.index}`)))

    ctx.say('Meanwhile the main line moves on')
    await fs.appendFile(join(dir, 'notes.md'), '- ticket 42 is a VIP customer\n')
    const mainConversation = join(ctx.root, 'main.jsonl')
    await fs.writeFile(mainConversation, [...CONVERSATION, { role: 'user', content: 'Note: ticket 42 is a VIP.' }].map((m) => JSON.stringify(m)).join('\n') + '\n')
    const moved = await lib.snapshotAgent({ dir, trace: mainConversation, agent: 'support-agent', message: 'a note on main' })
    ctx.show(`main: ${moved.id.slice(0, 19)} (notes.md changed, one more message)`)

    ctx.say('Let the four forks diverge, each in its own copy-on-write branch (speculative: emails wait)')
    await fs.writeFile(join(store.root, 'effects.json'), JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
    const agentFile = join(ctx.root, 'agent.cjs')
    await fs.writeFile(agentFile, AGENT)
    const runs = await Promise.all(
      branches.map((branch, i) =>
        lib.withHttpEffects({ store, context: { kind: 'branch', id: branch.id, name: branch.name }, env: process.env }, (proxyEnv) =>
          runAgent(agentFile, branch.path, { ...process.env, ...proxyEnv, FORKPOINT_ATTEMPT: String(i), DEMO_MAIL_URL: mail.url }),
        ),
      ),
    )
    runs.forEach((r, i) => ctx.show(`fork ${i}: exit ${r.code}  ${r.out.trim().split('\n').join('; ')}`))
    ctx.check(mail.received.length === 0, 'two forks "sent" an email, the service has received none yet')

    ctx.say('Keep the best fork, drop the others')
    const scores = runs.map((r) => (r.code === 0 ? Number(/score (\d+)/.exec(r.out)?.[1] ?? 0) : -1))
    const winner = scores.indexOf(Math.max(...scores))
    for (const [i, branch] of branches.entries()) if (i !== winner) await lib.abortWithEffects(branch, { env: process.env })
    const won = branches[winner]!
    const { tree } = await scanWorkspace({ store, dir: won.path, write: true })
    // the winner's files travel by the image merge below; its outbox is sent now, once
    const { sent } = await commitOutbox({ store, branchId: won.id, env: process.env })
    await won.abort()
    const winnerConversation = join(ctx.root, 'winner.jsonl')
    await fs.writeFile(
      winnerConversation,
      [...CONVERSATION, { role: 'assistant', content: 'Refund issued and the customer emailed.' }].map((m) => JSON.stringify(m)).join('\n') + '\n',
    )
    const ledger = (await lib.listEffects({ store, env: process.env })).ledger!
    const trace = await traceLayer({ store, spec: winnerConversation, cwd: ctx.root, env: process.env })
    const image = await store.writeObject(
      makeSnapshot({ parents: [forks[winner]!.id], tree, message: `fork ${winner}: refund`, agent: 'support-agent', layers: { trace, effects: ledger } }),
    )
    ctx.show(`fork ${winner} wins (score ${scores[winner]}); its outbox sent ${sent.length} email; the other forks' outboxes dropped\nits image: ${image.slice(0, 19)}`)

    ctx.say('Merge the winner into main, layer by layer')
    const merged = await lib.merge({ dir, from: image, env: process.env })
    ctx.show(merged.layers.map((l) => l.summary).join('\n'))
    ctx.check(merged.outcome === 'merged', 'a clean three-way merge of every layer')
    ctx.check(
      (await fs.readFile(join(dir, 'reply.md'), 'utf8')).includes('Refund') && (await fs.readFile(join(dir, 'notes.md'), 'utf8')).includes('VIP'),
      "the workspace has the winner's reply and main's note",
    )
    const entries = (await lib.listEffects({ store, id: 'HEAD', env: process.env })).entries
    const emails = entries.filter((e) => e.tool.startsWith('http POST'))
    ctx.show(emails.map((e) => `${e.status.padEnd(8)} ${e.idempotencyKey}`).join('\n'))
    ctx.check(mail.received.length === 1 && mail.received[0] === 'ticket-42-refund', 'the mail service received exactly one call: the winner’s, with its Idempotency-Key')
  } finally {
    await new Promise<void>((resolve) => mail.server.close(() => resolve()))
    for (const branch of await ws.branches()) await (await ws.openBranch(branch.name)).abort()
  }
}

function runAgent(file: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (out += c.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? 1, out }))
  })
}
