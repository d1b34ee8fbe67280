import { chownSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI, fp, fpInProcess, fpJsonInProcess, runProgram } from '../helpers/cli.js'
import { useCountingServer, workspaceDeferringSend } from '../helpers/countingServer.js'
import { makeWorkspace } from '../helpers/tmp.js'

const mail = useCountingServer()

/** The agent: curl (any language: it only honours HTTP_PROXY) POSTing an email, printing status, headers and body. */
const sendEmail = (to: string, extra: string[] = []) => [
  'curl',
  '-s',
  '-i',
  '-X',
  'POST',
  '-H',
  'content-type: application/json',
  ...extra,
  '-d',
  JSON.stringify({ to }),
  mail.url('/send'),
]

async function inBranch(dir: string, name: string, agent: string[]) {
  expect((await fpInProcess(dir, 'branch', name)).code).toBe(0)
  return fp(dir, 'run', '--branch', name, '--net', 'host', '--', ...agent)
}

function placeholderOf(stdout: string): { status: number; headers: string; body: { forkpoint: Record<string, unknown> } } {
  const [head, body] = stdout.replace(/\r/g, '').split('\n\n')
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head!)![1]), headers: head!, body: JSON.parse(body!) }
}

describe('HTTP effects of an agent in a branch (forkpoint run --branch)', () => {
  it('defers an irreversible request with the documented placeholder, and sends it once, with its Idempotency-Key, when the branch commits', async () => {
    const dir = await workspaceDeferringSend()
    const run = await inBranch(dir, 'welcome', sendEmail('ada@example.com'))
    expect(run.code).toBe(0)
    expect(mail.received).toEqual([])

    const placeholder = placeholderOf(run.stdout)
    expect(placeholder.status).toBe(202)
    expect(placeholder.headers).toMatch(/^x-forkpoint-deferred: 1$/im)
    const key = placeholder.body.forkpoint['idempotencyKey'] as string
    expect(key).toMatch(/^http:[0-9a-f]{64}$/)
    expect(placeholder.headers).toMatch(new RegExp(`^idempotency-key: ${key}$`, 'im'))
    expect(placeholder.body.forkpoint).toMatchObject({ deferred: true, tool: `http POST 127.0.0.1:${mail.port()}/send`, seq: 0, context: 'branch welcome' })

    const pending = await fpJsonInProcess<{ source: string; entries: Array<{ status: string; idempotencyKey: string }> }>(dir, 'effects', 'welcome', '--pending')
    expect(pending.json.source).toBe('branch welcome')
    expect(pending.json.entries.map((e) => [e.status, e.idempotencyKey])).toEqual([['deferred', key]])

    const commit = await fpInProcess(dir, 'commit', 'welcome')
    expect([commit.code, commit.stdout]).toEqual([0, expect.stringMatching(/1 deferred effect sent/)])
    expect(mail.received).toEqual([{ method: 'POST', path: '/send', idempotencyKey: key, body: JSON.stringify({ to: 'ada@example.com' }) }])

    const ledger = await fpJsonInProcess<{ source: string; entries: Array<{ status: string }> }>(dir, 'effects')
    expect(ledger.json.source).toBe('workspace')
    expect(ledger.json.entries.map((e) => e.status)).toEqual(['deferred', 'sending', 'executed'])
    expect((await fpJsonInProcess<{ entries: unknown[] }>(dir, 'effects', '--pending')).json.entries).toEqual([])
  })

  it("keeps the agent's own Idempotency-Key, and a branch made later gets the recorded response of a key already sent, without a call", async () => {
    const dir = await workspaceDeferringSend()
    const agent = sendEmail('bob@example.com', ['-H', 'Idempotency-Key: welcome-bob'])
    expect(placeholderOf((await inBranch(dir, 'first', agent)).stdout).body.forkpoint['idempotencyKey']).toBe('welcome-bob')
    expect((await fpInProcess(dir, 'commit', 'first')).code).toBe(0)
    expect(mail.received.map((r) => r.idempotencyKey)).toEqual(['welcome-bob'])

    // a fork of the agent repeats the request: it gets what the service answered the first time
    const again = await inBranch(dir, 'again', agent)
    const [head, body] = again.stdout.replace(/\r/g, '').split('\n\n')
    expect(head).toMatch(/^HTTP\/1\.1 200/)
    expect(JSON.parse(body!)).toEqual({ id: 'msg-1' })
    expect((await fpInProcess(dir, 'commit', 'again')).code).toBe(0)
    expect(mail.received).toHaveLength(1)
  })

  it('drops the outbox on abort: nothing is sent, and the ledger records it dropped', async () => {
    const dir = await workspaceDeferringSend()
    expect(placeholderOf((await inBranch(dir, 'doomed', sendEmail('eve@example.com'))).stdout).status).toBe(202)
    const abort = await fpInProcess(dir, 'abort', 'doomed')
    expect([abort.code, abort.stdout]).toEqual([0, 'aborted doomed; 1 deferred effect dropped\n'])
    expect(mail.received).toEqual([])
    const ledger = await fpJsonInProcess<{ entries: Array<{ status: string; class: string }> }>(dir, 'effects')
    expect(ledger.json.entries.map((e) => [e.status, e.class])).toEqual([
      ['deferred', 'irreversible'],
      ['dropped', 'irreversible'],
    ])
    expect(readdirSync(join(dir, '.forkpoint', 'refs', 'effects', 'branches'))).toEqual([])
  })

  it('keeps the outbox when the agent process is killed, and sends it when the branch commits', async () => {
    const dir = await workspaceDeferringSend()
    const crash = await inBranch(dir, 'crashy', [
      'sh',
      '-c',
      `${sendEmail('kim@example.com')
        .map((a) => `'${a}'`)
        .join(' ')} >/dev/null; kill -9 $$`,
    ])
    expect(crash.code).toBe(137)
    const pending = await fpJsonInProcess<{ entries: Array<{ status: string }> }>(dir, 'effects', 'crashy', '--pending')
    expect(pending.json.entries.map((e) => e.status)).toEqual(['deferred'])
    expect(mail.received).toEqual([])
    expect((await fpInProcess(dir, 'commit', 'crashy')).code).toBe(0)
    expect(mail.received.map((r) => r.body)).toEqual([JSON.stringify({ to: 'kim@example.com' })])
  })

  it('lets GET and unlisted requests through at once, in a branch too', async () => {
    const dir = await workspaceDeferringSend()
    const get = await inBranch(dir, 'reader', ['curl', '-s', mail.url('/send')])
    expect(get.stdout).toBe('{"id":"msg-1"}')
    const post = await fp(dir, 'run', '--branch', 'reader', '--net', 'host', '--', 'curl', '-s', '-X', 'POST', mail.url('/other'))
    expect(post.stdout).toBe('{"id":"msg-2"}')
    expect(mail.received.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /send', 'POST /other'])
    expect((await fpJsonInProcess<{ entries: unknown[] }>(dir, 'effects', 'reader')).json.entries).toEqual([])
    expect((await fpInProcess(dir, 'abort', 'reader')).code).toBe(0)
  })

  it('lists a ledger as text: the workspace, an image, a branch', async () => {
    const dir = await workspaceDeferringSend()
    expect((await fpInProcess(dir, 'effects')).stdout).toBe('workspace: no ledger yet\n')
    await inBranch(dir, 'listed', sendEmail('lin@example.com'))
    const listed = await fpInProcess(dir, 'effects', 'listed', '--pending')
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(
      new RegExp(`^branch listed: outbox sha256:[0-9a-f]{12}, 1 entry\\n  #0  deferred  irreversible  http POST 127\\.0\\.0\\.1:${mail.port()}/send  key http:[0-9a-f]{64}\\n$`),
    )
    expect((await fpInProcess(dir, 'commit', 'listed')).code).toBe(0)
    expect((await fpInProcess(dir, 'effects', '--pending')).stdout).toMatch(/^workspace: outbox sha256:[0-9a-f]{12}: nothing pending\n$/)
    const snap = await fpInProcess(dir, 'snapshot', '-m', 'after', '--effects', 'refs/effects/workspace')
    expect(snap.code).toBe(0)
    const image = await fpInProcess(dir, 'effects', 'HEAD')
    expect(image.stdout).toMatch(/^image sha256:[0-9a-f]{64}: ledger sha256:[0-9a-f]{12}, 3 entries\n {2}#0 {2}deferred .*\n {2}#1 {2}sending .*\n {2}#2 {2}executed .*\n$/)
    const tree = (await fpJsonInProcess<{ object: { world: { tree: string } } }>(dir, 'show', 'HEAD')).json.object.world.tree
    const notALedger = await fpInProcess(dir, 'effects', tree)
    expect([notALedger.code, notALedger.stderr]).toEqual([5, expect.stringMatching(/a tree object: give an image, a ledger or a live branch\n$/)])
  })

  it('refuses a malformed policy file with exit 2 and a one-line message, before the agent runs', async () => {
    const dir = await workspaceDeferringSend()
    writeFileSync(join(dir, '.forkpoint', 'effects.json'), '{"rules": [{"host": "127.0.0.1:*", "class": "sometimes"}]}')
    expect((await fpInProcess(dir, 'branch', 'b')).code).toBe(0)
    const run = await fp(dir, 'run', '--branch', 'b', '--net', 'host', '--', 'sh', '-c', 'echo ran > ran.txt')
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(
      `forkpoint: ${join(dir, '.forkpoint', 'effects.json')}: rules[0].class must be one of read, idempotent, irreversible (see docs/effects.md, "The HTTP policy")\n`,
    )
    expect((await fp(dir, 'run', '--branch', 'b', '--', 'sh', '-c', 'echo ran > ran.txt')).code).toBe(2) // without network too
    expect(() => statSync(join(dir, 'ran.txt'))).toThrow()
    expect((await fpInProcess(dir, 'abort', 'b')).code).toBe(0)
  })

  it('works unprivileged', async () => {
    const dir = await makeWorkspace({ 'notes.txt': 'hello\n' })
    for (const path of [dir, join(dir, 'notes.txt')]) chownSync(path, 65534, 65534)
    const nobody = (...args: string[]) => runProgram(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', CLI, ...args], { cwd: dir })
    expect((await nobody('init')).code).toBe(0)
    writeFileSync(join(dir, '.forkpoint', 'effects.json'), JSON.stringify({ rules: [{ host: '127.0.0.1:*', method: 'POST', path: '/send', class: 'irreversible' }] }))
    chownSync(join(dir, '.forkpoint', 'effects.json'), 65534, 65534)
    expect((await nobody('branch', 'mine')).code).toBe(0)
    const run = await nobody('run', '--branch', 'mine', '--net', 'host', '--', ...sendEmail('uma@example.com'))
    expect([run.code, placeholderOf(run.stdout).status]).toEqual([0, 202])
    expect(mail.received).toEqual([])
    expect((await nobody('commit', 'mine')).code).toBe(0)
    expect(mail.received.map((r) => r.body)).toEqual([JSON.stringify({ to: 'uma@example.com' })])
  })
})
