import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startService } from '../../src/service/httpService.js'
import { answerClaudeHook } from '../../src/adapters/claudeCode/answerHook.js'
import { type Digest, checkout, diffSnapshots, log } from '../../src/index.js'
import { readRef } from '../../src/store/refs.js'
import type { Store } from '../../src/store/Store.js'
import { loadRun } from '../../src/trace/core/loadRun.js'
import type { StepError } from '../../src/objects/Run.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { CLI, type CliResult, fp, fpJson, runCli, runProgram } from '../helpers/cli.js'
import { CLAUDE_BIN, type ScriptedApi, type Seen, type Turn, claudeEnv, startScriptedClaudeApi } from '../helpers/scriptedClaudeApi.js'
import { serviceHealth } from '../helpers/serviceHealth.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

const HOOK = `${CLI} claude hook`
const servers: ScriptedApi[] = []
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
})

/** A workspace with a first snapshot and forkpoint's hooks installed, a HOME of its own, and the scripted API. */
async function claudeWorkspace(script: (seen: Seen) => Turn) {
  const { dir, store } = await storeWorkspace({ 'README.md': 'a project\n' })
  expect((await fp(dir, 'snapshot', '-m', 'base')).code).toBe(0)
  expect((await fp(dir, 'claude', 'install', '--command', HOOK)).code).toBe(0)
  const api = await startScriptedClaudeApi(script)
  servers.push(api)
  const home = tempDir('home')
  return { dir, store, api, env: claudeEnv(home, api.url), home }
}

/** Write two files, then say so. */
const twoWrites =
  (content: string) =>
  (seen: Seen): Turn => {
    if (seen.toolResults === 0) return { tool: 'Write', input: { file_path: join(seen.cwd, 'hello.txt'), content } }
    if (seen.toolResults === 1) return { tool: 'Write', input: { file_path: join(seen.cwd, 'notes.md'), content: '# notes\n' } }
    return { text: 'Wrote hello.txt and notes.md.' }
  }

function claude(dir: string, env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return runProgram([CLAUDE_BIN, '-p', 'write the files', '--output-format', 'json', '--allowedTools', 'Write', ...args], { cwd: dir, env })
}

async function latestRun(dir: string): Promise<string> {
  return (await fpJson<{ runs: Array<{ runId: string }> }>(dir, 'runs', '-n', '1')).json.runs[0]!.runId
}

function sessionOf(result: CliResult): string {
  return (JSON.parse(result.stdout) as { session_id: string }).session_id
}

async function fileIn(store: Store, image: Digest, path: string): Promise<string | null> {
  const into = join(tempDir('image'), 'world')
  await checkout({ store, id: image, into })
  return fs.readFile(join(into, path), 'utf8').catch(() => null)
}

function hook(dir: string, input: string, env: Record<string, string> = {}, extra: string[] = []): Promise<CliResult> {
  return runCli(['claude', 'hook', ...extra], { cwd: dir, env, input })
}

describe('forkpoint claude install', () => {
  it("adds forkpoint's hooks to .claude/settings.json, keeps the user's, never twice, and takes only its own out", async () => {
    const { dir } = await storeWorkspace({
      '.claude/settings.json': JSON.stringify({ model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-guard' }] }] } }),
    })
    const first = await fpJson<{ changed: boolean; settings: string }>(dir, 'claude', 'install', '--command', HOOK)
    expect(first.json.changed).toBe(true)
    expect((await fpJson<{ changed: boolean }>(dir, 'claude', 'install', '--command', HOOK)).json.changed).toBe(false)
    const settings = JSON.parse(await fs.readFile(first.json.settings, 'utf8')) as {
      model: string
      hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command: string }> }>>
    }
    expect(settings.model).toBe('opus')
    expect(Object.keys(settings.hooks).sort()).toEqual(['PostToolUse', 'PostToolUseFailure', 'PreToolUse', 'SessionEnd', 'Stop'])
    expect(settings.hooks['PreToolUse']!.map((g) => [g.matcher, g.hooks[0]!.command])).toEqual([
      ['Bash', 'my-guard'],
      ['*', HOOK],
    ])
    expect(settings.hooks['Stop']).toEqual([{ hooks: [{ type: 'command', command: HOOK }] }])

    expect((await fp(dir, 'claude', 'install', '--uninstall')).code).toBe(0)
    expect(JSON.parse(await fs.readFile(first.json.settings, 'utf8'))).toEqual({
      model: 'opus',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'my-guard' }] }] },
    })
  })

  it('refuses a symlinked settings file and hooks that are not groups, exit 2, changing nothing', async () => {
    const { dir } = await storeWorkspace({ 'private.json': '{"env":{"ANTHROPIC_API_KEY":"sk-secret"}}\n', '.claude/other.json': '{"hooks":{"PreToolUse":[null]}}' })
    await fs.symlink('../private.json', join(dir, '.claude/settings.json'))
    const linked = await fp(dir, 'claude', 'install')
    expect([linked.code, linked.stderr]).toEqual([2, expect.stringMatching(/settings\.json is a symlink/)])
    expect((await fs.lstat(join(dir, '.claude/settings.json'))).isSymbolicLink()).toBe(true)
    await fs.rm(join(dir, '.claude/settings.json'))
    await fs.rename(join(dir, '.claude/other.json'), join(dir, '.claude/settings.json'))
    const malformed = await fp(dir, 'claude', 'install')
    expect([malformed.code, malformed.stderr]).toEqual([2, expect.stringMatching(/lists of \{matcher, hooks/)])
  })

  it('refuses a settings file that is not JSON, exit 2, and leaves it as it was', async () => {
    const { dir } = await storeWorkspace({ '.claude/settings.json': '{ "hooks": ' })
    const r = await fp(dir, 'claude', 'install')
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/settings\.json is not JSON .*nothing was changed/)
    expect(await fs.readFile(join(dir, '.claude/settings.json'), 'utf8')).toBe('{ "hooks": ')
  })
})

describe('the hooks, driven by the real Claude Code binary', () => {
  it("snapshot the files before and after every tool call on the session's own line, and Stop closes the run as its trace", async () => {
    // two writes, then one the tool refuses (PostToolUseFailure)
    const script = (seen: Seen): Turn => {
      if (seen.toolResults === 2) return { tool: 'Write', input: { file_path: '/proc/forkpoint-nope/x.txt', content: 'x' } }
      if (seen.toolResults === 3) return { text: 'Two written, one refused.' }
      return twoWrites('hello from claude\n')(seen)
    }
    const { dir, store, env } = await claudeWorkspace(script)
    const head = await readRef(store, 'HEAD')
    const result = await claude(dir, env)
    expect(result.code).toBe(0)
    const session = sessionOf(result)

    const images = await log({ store, from: `refs/claude/${session}` })
    // an image only where something changed: 'before' a call that follows another holds what 'after' the first held
    expect(images.map((i) => i.message.replace(/ \(claude session .*\)$/, ''))).toEqual(['stop', 'after Write toolu_1', 'after Write toolu_0', 'before Write toolu_0', 'base'])
    const [stop, , afterFirst, beforeFirst] = images.map((i) => i.id)
    expect(await fileIn(store, beforeFirst!, 'hello.txt')).toBeNull()
    expect(await fileIn(store, afterFirst!, 'hello.txt')).toBe('hello from claude\n')
    expect(await fileIn(store, stop!, 'notes.md')).toBe('# notes\n')
    expect(await readRef(store, 'HEAD')).toBe(head) // the workspace's own history is left alone

    const trace = (await readSnapshot(store, stop!)).trace!
    const run = await loadRun({ store, spec: (await store.readObject(trace, 'run'))['runId'] as string })
    expect(run.entrypoint).toBe('claude-code')
    expect(run.steps.map((s) => [s.type, s.name, (s.input as { file_path: string }).file_path, (s.error as StepError | undefined)?.name ?? null])).toEqual([
      ['tool', 'Write', join(dir, 'hello.txt'), null],
      ['tool', 'Write', join(dir, 'notes.md'), null],
      ['tool', 'Write', '/proc/forkpoint-nope/x.txt', 'ClaudeToolError'],
    ])
    expect((run.steps[2]!.error as StepError).message).toMatch(/\/proc\/forkpoint-nope\/x\.txt/)
    expect((run.steps[0]!.output as { type: string; content: string }).content).toBe('hello from claude\n')
  })

  it('record model traffic through the proxy with the tool calls in one run; it replays offline and diffs against another', async () => {
    const { dir, api, env } = await claudeWorkspace(twoWrites('first answer\n'))
    const recorded = await runCli(['run', '--record', '--proxy', '--', CLAUDE_BIN, '-p', 'write the files', '--output-format', 'json', '--allowedTools', 'Write'], {
      cwd: dir,
      env,
    })
    expect(recorded.code).toBe(0)
    const first = await latestRun(dir)
    const run = (await fpJson<{ run: { steps: Array<{ type: string; name: string }> } }>(dir, 'runs', 'show', first)).json.run
    expect(run.steps.map((s) => `${s.type} ${s.name}`)).toEqual(['llm anthropic.messages', 'tool Write', 'llm anthropic.messages', 'tool Write', 'llm anthropic.messages'])

    await api.close() // the network is closed: every answer must come from the recording
    for (const file of ['hello.txt', 'notes.md']) await fs.rm(join(dir, file)) // the files as the recording began
    const replayed = await runCli(['replay', first, '--', CLAUDE_BIN, '-p', 'write the files', '--output-format', 'json', '--allowedTools', 'Write'], { cwd: dir, env })
    expect([replayed.code, replayed.stdout]).toEqual([0, expect.stringMatching(/offline \(netns\): 3\/5 steps served, identical to the recording/)]) // the model's 3 served; the 2 tool calls ran again and matched
    expect(await fs.readFile(join(dir, 'hello.txt'), 'utf8')).toBe('first answer\n') // the replayed session wrote it again

    const other = await startScriptedClaudeApi(twoWrites('second answer\n'))
    servers.push(other)
    const again = await runCli(['run', '--record', '--proxy', '--', CLAUDE_BIN, '-p', 'write the files', '--output-format', 'json', '--allowedTools', 'Write'], {
      cwd: dir,
      env: { ...env, ANTHROPIC_BASE_URL: other.url },
    })
    expect(again.code).toBe(0)
    const second = await latestRun(dir)
    const diff = await fp(dir, 'diff', first, second)
    expect(diff.code).toBe(1)
    expect(diff.stdout).toMatch(/^diverged: output_divergence$/m)
    expect(diff.stdout).toMatch(/^step 0 llm "anthropic\.messages": same input, different output/m)
  })

  it('fork a session N ways: each fork resumes the conversation in a branch of its own and its hooks snapshot that branch', async () => {
    const script = (seen: Seen): Turn => {
      if (seen.lastUserText === 'go on')
        return !seen.answering ? { tool: 'Write', input: { file_path: join(seen.cwd, 'fork.txt'), content: `in ${seen.cwd}\n` } } : { text: 'Forked and written.' }
      return twoWrites('base answer\n')(seen)
    }
    const { dir, store, env } = await claudeWorkspace(script)
    const session = sessionOf(await claude(dir, env))

    const forked = await runCli(['claude', 'fork', session, '-n', '2', '-p', 'go on', '--claude', CLAUDE_BIN, '--json', '--', '--allowedTools', 'Write'], { cwd: dir, env })
    const forks = (JSON.parse(forked.stdout) as { forks: Array<{ image: string; branch: { name: string; path: string }; ended: { exitCode: number; sessionId: string } }> }).forks
    try {
      expect([forked.code, forks.map((f) => f.ended.exitCode)]).toEqual([0, [0, 0]])
      expect(new Set([session, ...forks.map((f) => f.ended.sessionId)]).size).toBe(3)
      const heads: Digest[] = []
      for (const fork of forks) {
        expect(await fs.readFile(join(fork.branch.path, 'fork.txt'), 'utf8')).toBe(`in ${fork.branch.path}\n`)
        expect(await fs.readFile(join(fork.branch.path, 'hello.txt'), 'utf8')).toBe('base answer\n') // the session's files, as it left them
        // the fork's hooks moved its own image, fork-<id>-<i>'s refs/forks/<id>/<i>, with its branch's files and its session's run
        const ref = `refs/forks/${fork.branch.name.split('-')[1]}/${fork.branch.name.split('-')[2]}`
        const images = await log({ store, from: ref })
        // before the Write the branch held what the fork's image holds: no image for that
        expect(images.slice(0, 2).map((i) => i.message.replace(/ \(claude session .*\)$/, ''))).toEqual(['stop', 'after Write toolu_2'])
        expect(images[2]!.id).toBe(fork.image)
        expect(await fileIn(store, images[0]!.id, 'fork.txt')).toBe(`in ${fork.branch.path}\n`)
        const trace = (await readSnapshot(store, images[0]!.id)).trace!
        const run = await loadRun({ store, spec: (await store.readObject(trace, 'run'))['runId'] as string })
        expect(run.steps.map((s) => [s.name, (s.input as { file_path: string }).file_path])).toEqual([['Write', join(fork.branch.path, 'fork.txt')]])
        heads.push(images[0]!.id)
      }
      const diff = await diffSnapshots({ store, a: heads[0]!, b: heads[1]! })
      expect(diff.changes.map((c) => [c.path, c.status])).toEqual([['fork.txt', 'modified']])
      await expect(fs.readFile(join(dir, 'fork.txt'))).rejects.toThrow() // the workspace itself is untouched
    } finally {
      for (const fork of forks) await fp(dir, 'abort', fork.branch.name)
    }
  })

  it('replays a session that repeats a call, checking what the tool really did each time', async () => {
    const again = (seen: Seen): Turn =>
      seen.toolResults < 2 ? { tool: 'Write', input: { file_path: join(seen.cwd, 'same.txt'), content: 'same\n' } } : { text: 'Wrote it twice.' }
    const { dir, api, env } = await claudeWorkspace(again)
    const argv = ['--', CLAUDE_BIN, '-p', 'write the files', '--output-format', 'json', '--allowedTools', 'Write']
    expect((await runCli(['run', '--record', '--proxy', ...argv], { cwd: dir, env })).code).toBe(0)
    const recorded = await latestRun(dir)
    await api.close()
    await fs.rm(join(dir, 'same.txt'))
    const replayed = await runCli(['replay', recorded, ...argv], { cwd: dir, env })
    expect([replayed.code, replayed.stdout]).toEqual([0, expect.stringMatching(/identical to the recording/)])
  })

  it("refuses to snapshot the workspace for a session that runs in a fork's branch without saying which", async () => {
    const { dir, store } = await storeWorkspace({})
    const inBranch = store.path('branches', 'live', 'x', 'mnt')
    await fs.mkdir(inBranch, { recursive: true })
    const r = await hook(dir, JSON.stringify({ hook_event_name: 'Stop', session_id: 's', cwd: inBranch }))
    expect([r.code, r.stderr]).toEqual([1, expect.stringMatching(/inside the store .* FORKPOINT_CLAUDE_BRANCH is not set/)])
    expect(await readRef(store, 'refs/claude/s')).toBeNull()
  })

  it('close the steps of a turn that ended without Stop (an interrupted one) at SessionEnd, as its own run', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const base = { session_id: 'cut', cwd: dir }
    const call = { ...base, hook_event_name: 'PostToolUse', tool_name: 'Read', tool_input: { file_path: 'a.txt' }, tool_response: { content: 'a' }, tool_use_id: 't1' }
    expect((await hook(dir, JSON.stringify(call))).code).toBe(0)
    expect((await hook(dir, JSON.stringify({ ...base, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' }))).code).toBe(0)
    const images = await log({ store, from: 'refs/claude/cut' })
    expect(images[0]!.message).toMatch(/^session end/)
    const trace = (await readSnapshot(store, images[0]!.id)).trace!
    const run = await loadRun({ store, spec: (await store.readObject(trace, 'run'))['runId'] as string })
    expect(run.steps.map((s) => s.name)).toEqual(['Read'])
    // nothing is left waiting: a later Stop of the session closes no run
    expect((await hook(dir, JSON.stringify({ ...base, hook_event_name: 'Stop' }))).code).toBe(0)
    expect((await readSnapshot(store, (await readRef(store, 'refs/claude/cut'))!)).trace).toBe(trace)
  })

  it('ask a running service for their snapshots, which its watcher makes without a scan', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const service = await startService({ dir })
    try {
      await fs.writeFile(join(dir, 'b.txt'), 'b\n')
      const event = { hook_event_name: 'PreToolUse', session_id: 'served', cwd: dir, tool_name: 'Write', tool_input: {}, tool_use_id: 't1' }
      expect((await hook(dir, JSON.stringify(event))).code).toBe(0)
      const health = await serviceHealth(service.address)
      expect(health['served']).toBe(1)
      const image = (await readRef(store, 'refs/claude/served'))!
      expect(await fileIn(store, image, 'b.txt')).toBe('b\n')
      // and the same with the service gone: the hook scans for itself
      await service.close()
      await fs.writeFile(join(dir, 'c.txt'), 'c\n')
      expect((await hook(dir, JSON.stringify({ ...event, tool_use_id: 't2' }))).code).toBe(0)
      expect(await fileIn(store, (await readRef(store, 'refs/claude/served'))!, 'c.txt')).toBe('c\n')
    } finally {
      await service.close()
    }
  })

  it("answer through a running service as they answer in their own process: output, exit code, images and the closed run's steps", async () => {
    const served = await storeWorkspace({ 'a.txt': 'a\n' })
    const own = await storeWorkspace({ 'a.txt': 'a\n' })
    const service = await startService({ dir: served.dir, claudeHook: answerClaudeHook })
    try {
      const env = { CLAUDE_API_KEY: 'plain-words-of-a-secret-42' } // its value is scrubbed from the steps, wherever the hook runs
      const events = (dir: string) => {
        const base = { session_id: 'same', cwd: dir }
        return [
          { ...base, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: 'b.txt' }, tool_use_id: 't1' },
          {
            ...base,
            hook_event_name: 'PostToolUse',
            tool_name: 'Write',
            tool_input: { file_path: 'b.txt', note: env.CLAUDE_API_KEY },
            tool_response: { ok: true },
            tool_use_id: 't1',
          },
          { ...base, hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', tool_input: { command: 'false' }, error: 'exit 1', tool_use_id: 't2' },
          { ...base, hook_event_name: 'PreToolUse', tool_input: {} },
          { ...base, hook_event_name: 'Stop' },
        ]
      }
      const answers = async (dir: string) => {
        const seen: CliResult[] = []
        for (const event of events(dir)) {
          await fs.writeFile(join(dir, 'b.txt'), `${event.hook_event_name}\n`)
          const r = await hook(dir, JSON.stringify(event), env)
          seen.push({ ...r, stderr: r.stderr.replaceAll(dir, 'DIR') })
        }
        return seen
      }
      const outcome = async ({ dir, store }: { dir: string; store: Store }) => {
        const images = await log({ store, from: 'refs/claude/same' })
        const trace = (await readSnapshot(store, images[0]!.id)).trace!
        const run = await loadRun({ dir, store, spec: (await store.readObject(trace, 'run'))['runId'] as string })
        const steps = run.steps.map(({ name, type, input, output, error }) => ({ name, type, input, output, error }))
        return { messages: images.map((i) => i.message), b: await fileIn(store, images[0]!.id, 'b.txt'), steps, redaction: run.redaction }
      }
      const viaService = await answers(served.dir)
      expect((await serviceHealth(service.address))['served']).toBe(events('').length) // every one went to the service
      expect(viaService).toEqual(await answers(own.dir))
      expect(viaService.map((r) => r.code)).toEqual([0, 0, 0, 1, 0])
      const result = await outcome(served)
      expect(result).toEqual(await outcome(own))
      expect(JSON.stringify(result.steps)).not.toContain(env.CLAUDE_API_KEY)
    } finally {
      await service.close()
    }
  })

  it('never block the agent: a hook that cannot do its work exits 1, not 2, saying why', async () => {
    const { dir } = await storeWorkspace({})
    const bad = await hook(dir, '{ not json', {}, ['--unknown', 'extra'])
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringMatching(/^forkpoint claude hook: a Claude Code hook's input must be JSON/)])
    const noTool = await hook(dir, JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 's', cwd: dir }))
    expect([noTool.code, noTool.stderr]).toEqual([1, expect.stringMatching(/needs tool_name/)])
    const nowhere = await hook(dir, JSON.stringify({ hook_event_name: 'Stop', session_id: 's', cwd: tempDir('no-store') }))
    expect([nowhere.code, nowhere.stderr]).toEqual([1, expect.stringMatching(/no forkpoint store/)])
    const hostile = await hook(dir, JSON.stringify({ hook_event_name: 'Stop', session_id: '../../HEAD', cwd: dir }))
    expect(hostile.code).toBe(0) // a session id a ref cannot spell is written in hex, inside refs/claude/
    expect(await fs.readdir(join(dir, '.forkpoint', 'refs', 'claude'))).toEqual([`_${Buffer.from('../../HEAD').toString('hex')}`])
  })
})
