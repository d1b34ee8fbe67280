import { describe, expect, it } from 'vitest'
import { type Effects, type TaskContext, Workspace, openEffects, speculate } from '../../src/index.js'
import { fp, fpJson } from '../helpers/cli.js'
import { useCountingServer, workspaceDeferringSend } from '../helpers/countingServer.js'
import { tempDir } from '../helpers/tmp.js'

const mail = useCountingServer()

describe('speculate / explore with HTTP effects (CLI)', () => {
  it('4 candidates all send: the service receives exactly one call, the winner’s; the losers’ are dropped', async () => {
    const dir = await workspaceDeferringSend()
    const barrier = tempDir('barrier')
    // each candidate sends (its own key), then waits until all four have, so every one of them "sent" before any wins
    const candidate = `curl -s -X POST -H "Idempotency-Key: welcome-$FORKPOINT_ATTEMPT" -d "from $FORKPOINT_ATTEMPT" ${mail.url('/send')} && touch ${barrier}/$FORKPOINT_ATTEMPT && while [ $(ls ${barrier} | wc -l) -lt 4 ]; do sleep 0.1; done`
    const r = await fpJson<{ committed: boolean; winner: number; commit: { effects: { executed: Array<{ idempotencyKey: string }> } } }>(
      dir,
      'speculate',
      '--no-isolate',
      '--allow-unsandboxed-effects',
      '--parallel',
      '4',
      ...[0, 1, 2, 3].flatMap(() => ['-c', candidate]),
    )
    expect(r.code).toBe(0)
    expect(r.json.committed).toBe(true)
    const winnerKey = `welcome-${r.json.winner}`
    expect(r.json.commit.effects.executed.map((e) => e.idempotencyKey)).toEqual([winnerKey])
    expect(mail.received.map((m) => [m.idempotencyKey, m.body])).toEqual([[winnerKey, `from ${r.json.winner}`]])
    const ledger = await fpJson<{ entries: Array<{ status: string; idempotencyKey: string }> }>(dir, 'effects')
    const byStatus = (s: string) =>
      ledger.json.entries
        .filter((e) => e.status === s)
        .map((e) => e.idempotencyKey)
        .sort()
    expect(byStatus('executed')).toEqual([winnerKey])
    expect(byStatus('dropped')).toEqual([0, 1, 2, 3].map((i) => `welcome-${i}`).filter((k) => k !== winnerKey))
  })

  it('explore, sandboxed with the host network: 4 attempts send the same email, one call', async () => {
    const dir = await workspaceDeferringSend()
    const send = ['curl', '-s', '-X', 'POST', '-H', 'Idempotency-Key: newsletter-7', '-d', 'issue 7', mail.url('/send')]
    const r = await fp(dir, 'explore', '-n', '4', '--net', 'host', '--json', '--', ...send)
    expect([r.code, JSON.parse(r.stdout).committed]).toEqual([0, true])
    expect(mail.received.map((m) => m.idempotencyKey)).toEqual(['newsletter-7'])
    // replayed by a later attempt: the recorded answer, no call
    const again = await fp(dir, 'explore', '-n', '2', '--net', 'host', '--json', '--', ...send)
    expect((JSON.parse(again.stdout) as { results: Array<{ value: { stdout: string } }> }).results.map((x) => x.value.stdout)).toEqual(['{"id":"msg-1"}', '{"id":"msg-1"}'])
    expect(mail.received).toHaveLength(1)
  })
})

describe('speculate with an effects handle (library)', () => {
  it("runs only the winner's deferred effects, once; a replay from the saved ledger calls nothing", async () => {
    const dir = await workspaceDeferringSend()
    const ws = await Workspace.open({ dir })
    const root = await openEffects({ store: ws.store, env: {} })
    const sendVia = (effects: Effects) =>
      effects.tool(
        'email.send',
        async (to: string) => (await (await fetch(mail.url('/send'), { method: 'POST', headers: { 'idempotency-key': `welcome:${to}` }, body: to })).json()) as { id: string },
        {
          class: 'irreversible',
          key: (to) => `welcome:${to}`,
        },
      )
    const seen: unknown[] = []
    const outcome = await speculate(
      [0, 1, 2, 3].map((i) => async (_path: string, _n: number, _signal: AbortSignal, context: TaskContext) => {
        seen.push(await sendVia(context.effects!)('ada@example.com'))
        return { success: true, score: i } // every one succeeds; the best score (3) wins
      }),
      { firstWins: false, effects: root },
    ).apply(ws)
    expect(outcome.winner).toBe(3)
    expect(seen).toHaveLength(4)
    expect(seen.every((p) => (p as { deferred?: boolean }).deferred === true)).toBe(true)
    expect(mail.received.map((m) => m.idempotencyKey)).toEqual(['welcome:ada@example.com'])
    expect(root.pending()).toEqual([])

    const replayed = await openEffects({ store: ws.store, ledger: await root.ledger(), env: {} })
    expect(await sendVia(replayed)('ada@example.com')).toEqual({ id: 'msg-1' })
    expect(mail.received).toHaveLength(1)
  })
})
