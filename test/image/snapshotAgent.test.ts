import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Store } from '../../src/index.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { RunStore } from '../../src/trace/core/RunStore.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { makeRunId, type Run } from '../../src/objects/Run.js'
import { transcriptText } from '../../src/trace/core/transcript.js'
import { runCli } from '../helpers/cli.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { callOperation } from '../helpers/callOperation.js'

const OPENAI = [
  '{"role":"system","content":"You are terse."}',
  '{"role":"user","content":"list files"}',
  '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]}',
  '{"role":"tool","tool_call_id":"c1","content":"a.txt"}',
  '{"role":"assistant","content":"a.txt"}',
].join('\n')

const ANTHROPIC = [
  '{"role":"user","content":[{"type":"text","text":"read a.txt"}]}',
  '  {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a.txt"}}]}\r',
  '',
  '{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"hi"}]}',
].join('\n')

async function runOf(store: Store, digest: string): Promise<Run> {
  return (await store.readObject(digest as `sha256:${string}`, 'run')) as unknown as Run
}

function recordedRun(startedAt: Date, endedAt: Date): Run {
  return {
    kind: 'run',
    schemaVersion: 1,
    runId: makeRunId(startedAt.getTime()),
    entrypoint: 'node agent.js',
    startedAt: startedAt.toISOString(),
    endedAt: endedAt.toISOString(),
    status: 'ok',
    redaction: 'secrets',
    steps: [],
    meta: {},
  }
}

describe('snapshot --trace', () => {
  it('turns an OpenAI-style transcript into a run whose steps carry the messages, and gives the same bytes back', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    for (const [name, text] of [
      ['openai.jsonl', `${OPENAI}\n`],
      ['anthropic.jsonl', ANTHROPIC],
    ] as const) {
      await fs.writeFile(join(dir, name), text)
      const result = await snapshotAgent({ dir, trace: name, env: false, allowEmpty: true })
      const snapshot = await readSnapshot(store, result.id)
      const run = await runOf(store, snapshot.trace!)
      expect(transcriptText(run)).toBe(text)
      expect(run.meta['transcript']).toMatchObject({ format: name === 'openai.jsonl' ? 'openai' : 'anthropic' })
      expect(run.steps.map((s) => s.type)).toEqual(name === 'openai.jsonl' ? ['input', 'input', 'llm', 'tool', 'llm'] : ['input', 'llm', 'tool'])
      expect(run.steps[0]!.input).toEqual(JSON.parse(text.split('\n')[0]!))
    }
  })

  it('redacts secrets in a transcript as in any recorded run', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const key = 'sk-abcdefghijklmnopqrstuvwxyz012345'
    await fs.writeFile(join(dir, 'm.jsonl'), `{"role":"user","content":"my key is ${key}"}\n`)
    const result = await snapshotAgent({ dir, trace: 'm.jsonl' })
    const run = await runOf(store, (await readSnapshot(store, result.id)).trace!)
    expect(JSON.stringify(run)).not.toContain(key)
    expect(transcriptText(run)).toBe('{"role":"user","content":"my key is [redacted secret]"}\n')
  })

  it('refuses a malformed transcript with exit 5 naming the line, and writes no snapshot', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const cases: Array<[string, string]> = [
      ['{"role":"user","content":"hi"}\n{"role":"user",\n', 'line 2'],
      ['{"role":"user","content":"hi"}\n[1,2]\n', 'line 2'],
      ['{"content":"hi"}\n', 'line 1'],
      ['{"role":"user","content":"ok"}\n\n{"role":"user","content":5}\n', 'line 3'],
      ['\n\n', 'no messages'],
    ]
    for (const [text, named] of cases) {
      await fs.writeFile(join(dir, 'bad.jsonl'), text)
      await expect(snapshotAgent({ dir, trace: 'bad.jsonl' }), named).rejects.toMatchObject({ exitCode: 5, message: expect.stringContaining(named) })
    }
    const r = await runCli(['snapshot', '--trace', 'bad.jsonl'], { cwd: dir })
    expect({ code: r.code, lines: r.stderr.trim().split('\n').length }).toEqual({ code: 5, lines: 1 })
    expect((await callOperation('log', { dir })).entries).toEqual([])
  })

  it('attaches a run artifact file, validated, and a stored run by id, prefix or latest', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const run = recordedRun(new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:01Z'))
    const runs = RunStore.open({ store })
    const digest = await runs.save(run)
    runs.close()
    for (const spec of [run.runId, run.runId.slice(4, 14), 'latest']) {
      const r = await snapshotAgent({ dir, trace: spec, allowEmpty: true })
      expect((await readSnapshot(store, r.id)).trace).toBe(digest)
    }
    await fs.writeFile(join(dir, 'x.run.json'), JSON.stringify(run))
    const fromFile = await snapshotAgent({ dir, trace: 'x.run.json', allowEmpty: true })
    expect((await readSnapshot(store, fromFile.id)).trace).toBe(digest)
    await fs.writeFile(join(dir, 'bad.run.json'), JSON.stringify({ ...run, status: 'meh' }))
    await expect(snapshotAgent({ dir, trace: 'bad.run.json' })).rejects.toMatchObject({ exitCode: 5 })
  })

  it('attaches the run recorded since the last snapshot by default, once, and not with --no-trace', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const first = await snapshotAgent({ dir })
    expect((await readSnapshot(store, first.id)).trace).toBeUndefined()
    const createdAt = Date.parse((await readSnapshot(store, first.id)).meta.createdAt)
    const runs = RunStore.open({ store })
    const before = await runs.save(recordedRun(new Date(createdAt - 5000), new Date(createdAt - 4000)))
    expect(before).toBeTruthy()
    await fs.writeFile(join(dir, 'a.txt'), 'changed\n')
    // a run that ended before the last snapshot is not "since" it
    const second = await snapshotAgent({ dir })
    const head = await readSnapshot(store, second.id)
    expect(head.trace).toBeUndefined()
    const after = await runs.save(recordedRun(new Date(Date.parse(head.meta.createdAt) + 1000), new Date(Date.parse(head.meta.createdAt) + 2000)))
    runs.close()
    await fs.writeFile(join(dir, 'a.txt'), 'again\n')
    const off = await snapshotAgent({ dir, trace: false })
    expect((await readSnapshot(store, off.id)).trace).toBeUndefined()
    await fs.writeFile(join(dir, 'a.txt'), 'once more\n')
    const on = await snapshotAgent({ dir })
    expect((await readSnapshot(store, on.id)).trace).toBe(after)
    // kept on the next snapshot (carried), not attached anew
    await fs.writeFile(join(dir, 'a.txt'), 'last\n')
    const next = await snapshotAgent({ dir })
    expect(next.attached.trace).toBeUndefined()
    expect((await readSnapshot(store, next.id)).trace).toBe(after)
  })
})

describe('snapshot --env, --agent, --effects', () => {
  it('records the environment with secret-looking names and values scrubbed, overridable per name', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const env = { HOME: '/home/me', GITHUB_TOKEN: 'ghp_x', URL: 'https://u:hunter22@example.com/', LANG: 'C', API_KEY: 'keepme', DEBUG_LEVEL: '3' }
    const r = await snapshotAgent({ dir, env, keepEnv: ['API_KEY'], scrubEnv: ['LANG'] })
    expect((await readSnapshot(store, r.id)).world.env).toEqual({
      HOME: '/home/me',
      GITHUB_TOKEN: '[redacted secret]',
      URL: '[redacted secret]',
      LANG: '[redacted secret]',
      API_KEY: 'keepme',
      DEBUG_LEVEL: '3',
    })
  })

  it('through the CLI: --env, --keep-env, --scrub-env and --agent', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const r = await runCli(['snapshot', '--json', '--env', '--keep-env', 'MY_TOKEN', '--scrub-env', 'PLAIN', '--agent', 'coder-7'], {
      cwd: dir,
      env: { MY_TOKEN: 'tok', OTHER_SECRET: 'shh', PLAIN: 'p', VISIBLE: 'v' },
    })
    expect(r.code).toBe(0)
    const snapshot = await readSnapshot(store, JSON.parse(r.stdout).id)
    expect(snapshot.meta.agent).toBe('coder-7')
    expect(snapshot.world.env).toMatchObject({ MY_TOKEN: 'tok', OTHER_SECRET: '[redacted secret]', PLAIN: '[redacted secret]', VISIBLE: 'v' })
  })

  it('attaches a ledger by id, and refuses any other kind with exit 5', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
    const ledger = await store.writeObject({ kind: 'ledger', schemaVersion: 1, entries: [] })
    const notLedger = await store.writeObject({ kind: 'note', schemaVersion: 1 })
    const ok = await runCli(['snapshot', '--json', '--effects', ledger.slice(7, 20)], { cwd: dir })
    expect(ok.code).toBe(0)
    expect((await readSnapshot(store, JSON.parse(ok.stdout).id)).effects).toBe(ledger)
    const bad = await runCli(['snapshot', '--effects', notLedger], { cwd: dir, env: {} })
    expect({ code: bad.code, says: /ledger/.test(bad.stderr) }).toEqual({ code: 5, says: true })
  })
})
