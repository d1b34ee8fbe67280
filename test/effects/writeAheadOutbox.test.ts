import { describe, expect, it } from 'vitest'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fp, fpJson, runCli } from '../helpers/cli.js'
import { useCountingServer, workspaceDeferringSend } from '../helpers/countingServer.js'
import { killedAt } from '../helpers/killAtStep.js'
import { until } from '../helpers/until.js'

const mail = useCountingServer()

/** Branch NAME whose agent POSTs the newsletter with its own Idempotency-Key: the same effect in every branch. */
async function branchSending(dir: string, name: string): Promise<void> {
  expect((await fp(dir, 'branch', name)).code).toBe(0)
  const curl = ['curl', '-s', '-o', '/dev/null', '-X', 'POST', '-H', 'Idempotency-Key: newsletter-7', '-d', 'issue 7', mail.url('/send')]
  expect((await fp(dir, 'run', '--branch', name, '--net', 'host', '--', ...curl)).code).toBe(0)
}

type Entry = { status: string; idempotencyKey: string }

describe('the write-ahead outbox of forkpoint commit', () => {
  it('counts what was actually sent: a sibling committing a key already sent says so, and sends nothing', async () => {
    const dir = await workspaceDeferringSend()
    await branchSending(dir, 'first')
    await branchSending(dir, 'second')
    const first = await fp(dir, 'commit', 'first')
    expect([first.code, first.stdout]).toEqual([0, expect.stringMatching(/; 1 deferred effect sent\n$/)])
    const second = await fp(dir, 'commit', 'second')
    expect([second.code, second.stdout]).toEqual([0, expect.stringMatching(/; 1 deferred effect already sent, not sent again\n$/)])
    expect(mail.received.map((r) => r.idempotencyKey)).toEqual(['newsletter-7'])
  })

  it('keeps a committed effect that a crash left unsent when a sibling holding the same key is aborted, and the next status sends it', async () => {
    const dir = await workspaceDeferringSend()
    await branchSending(dir, 'kept')
    await branchSending(dir, 'thrown')
    await killedAt(dir, ['commit', 'kept'], { step: 'commit:applied' })
    expect(mail.received).toEqual([])
    expect((await fpJson<{ entries: Entry[] }>(dir, 'effects', '--pending')).json.entries.map((e) => [e.status, e.idempotencyKey])).toEqual([['deferred', 'newsletter-7']])

    expect((await fp(dir, 'abort', 'thrown')).stdout).toBe('aborted thrown\n')
    const status = await fp(dir, 'status')
    expect([status.code, status.stderr]).toEqual([0, 'forkpoint: sent 1 deferred effect an interrupted commit left unsent\n'])
    expect(mail.received.map((r) => r.idempotencyKey)).toEqual(['newsletter-7'])
    const ledger = (await fpJson<{ entries: Entry[] }>(dir, 'effects')).json.entries
    expect(ledger.filter((e) => e.status !== 'deferred').map((e) => e.status)).toEqual(['sending', 'executed'])
    expect((await fp(dir, 'effects', '--uncertain')).stdout).toMatch(/^workspace: ledger sha256:[0-9a-f]{12}: no effect was resent after an uncertain attempt\n$/)
  })

  it('a run recording effects in the workspace meanwhile never overwrites an outbox a commit handed over', async () => {
    const dir = await workspaceDeferringSend()
    await branchSending(dir, 'mail')
    // a run in the workspace itself: it reads the workspace's ledger as it starts and saves it after its own request
    const receipt = `curl -s -o /dev/null -X POST -H 'Idempotency-Key: receipt-1' -d receipt ${mail.url('/send')}`
    const run = runCli(['run', '--net', 'host', '--', 'sh', '-c', `touch started; while [ ! -e go ]; do sleep 0.05; done; ${receipt}`], { cwd: dir })
    await until(() => existsSync(join(dir, 'started')), 'the run in the workspace to start')
    await killedAt(dir, ['commit', 'mail'], { step: 'commit:applied' })
    writeFileSync(join(dir, 'go'), '')
    expect((await run).code).toBe(0)
    expect(mail.received.map((r) => r.idempotencyKey)).toEqual(['receipt-1'])
    expect((await fp(dir, 'status')).code).toBe(0)
    expect(mail.received.map((r) => r.idempotencyKey)).toEqual(['receipt-1', 'newsletter-7'])
  })

  it('sends what a crash left unsent when the service starts', async () => {
    const dir = await workspaceDeferringSend()
    await branchSending(dir, 'mail')
    await killedAt(dir, ['commit', 'mail'], { step: 'send:intent-saved' })
    expect(mail.received).toEqual([])
    const { startService } = await import('../../src/service/httpService.js')
    const service = await startService({ dir, watch: false })
    try {
      expect(service.recovered).toBe(
        "sent 1 deferred effect an interrupted commit left unsent, 1 of them again after an attempt with no recorded answer (see 'forkpoint effects --uncertain')",
      )
    } finally {
      await service.close()
    }
    expect(mail.received.map((r) => r.idempotencyKey)).toEqual(['newsletter-7'])
  })

  it('lists an effect resent after an uncertain attempt, as text', async () => {
    const dir = await workspaceDeferringSend()
    await branchSending(dir, 'mail')
    await killedAt(dir, ['commit', 'mail'], { step: 'send:answered' })
    const recover = await fp(dir, 'effects', 'recover')
    expect([recover.code, recover.stdout]).toEqual([0, "1 deferred effect sent (1 resent after an uncertain attempt: see 'forkpoint effects --uncertain')\n"])
    expect(mail.received.map((r) => r.idempotencyKey)).toEqual(['newsletter-7', 'newsletter-7'])
    expect((await fp(dir, 'effects', '--uncertain')).stdout).toMatch(
      /^workspace: ledger sha256:[0-9a-f]{12}, 1 entry resent after an uncertain attempt \(a service ignoring Idempotency-Key may have had them twice\)\n {2}#\d+ {2}executed .* key newsletter-7\n$/,
    )
    expect((await fp(dir, 'effects', 'recover')).stdout).toBe('nothing to send: no committed effect is waiting\n')
  })
})
