import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fp, fpJson, runCli } from '../helpers/cli.js'
import { useCountingServer } from '../helpers/countingServer.js'
import { makeWorkspace } from '../helpers/tmp.js'

const mail = useCountingServer()

/** A Node agent that sends the same email twice (one key) and prints what it got each time. */
const AGENT = `
const send = async () => {
  const res = await fetch(process.env.MAIL_URL, { method: 'POST', headers: { 'idempotency-key': 'welcome-ada' }, body: 'hi ada' })
  return res.status + ' ' + (await res.text())
}
send().then(async (first) => console.log(first + ' | ' + (await send())))
`

describe('HTTP effects under forkpoint run --record (the workspace: requests run at once)', () => {
  it('sends an irreversible request once per key, answers the repeat from the ledger, and a replay calls nothing', async () => {
    const dir = await makeWorkspace({ 'agent.cjs': AGENT })
    expect((await fp(dir, 'init')).code).toBe(0)
    writeFileSync(join(dir, '.forkpoint', 'effects.json'), JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
    const env = { MAIL_URL: mail.url('/send') }
    const recorded = await runCli(['run', '--record', '--json', '--', 'node', 'agent.cjs'], { cwd: dir, env })
    expect(recorded.code, recorded.stderr).toBe(0)
    expect(recorded.stderr).toMatch(/200 \{"id":"msg-1"\} \| 200 \{"id":"msg-1"\}/)
    expect(mail.received.map((r) => r.idempotencyKey)).toEqual(['welcome-ada'])
    const ledger = await fpJson<{ entries: Array<{ status: string; idempotencyKey: string }> }>(dir, 'effects')
    expect(ledger.json.entries.map((e) => [e.status, e.idempotencyKey])).toEqual([['executed', 'welcome-ada']])

    const replay = await runCli(['replay', 'latest', '--', 'node', 'agent.cjs'], { cwd: dir, env })
    expect(replay.code, replay.stderr).toBe(0)
    expect(replay.stdout).toMatch(/200 \{"id":"msg-1"\} \| 200 \{"id":"msg-1"\}/)
    expect(mail.received).toHaveLength(1)
  })
})
