import { spawn } from 'node:child_process'
import { mkdirSync, symlinkSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace, listRuns, loadRun } from '../../src/index.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { FIXTURES } from './cli.js'

function node(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    child.on('close', (code) => done({ code: code ?? -1, stderr }))
  })
}

describe('node --import forkpoint/register', () => {
  let server: FakeLlmServer
  beforeAll(async () => {
    server = await startFakeLlmServer()
  })
  afterAll(async () => server.close())

  it('resolves through the package exports map and records a run into the workspace store on exit', async () => {
    const dir = tempDir('register')
    await initWorkspace({ dir })
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(resolve(import.meta.dirname, '../..'), join(dir, 'node_modules', 'forkpoint'))
    const env = {
      OPENAI_BASE_URL: `${server.url}/v1`,
      ANTHROPIC_BASE_URL: server.url,
      OPENAI_API_KEY: 'sk-test-0123456789abcdefghij',
      ANTHROPIC_API_KEY: 'anthropic-test-key-0123',
      FORKPOINT_TRACE_JOURNAL: '',
    }
    const res = await node(['--import', 'forkpoint/register', join(FIXTURES, 'llmAgent.mjs')], dir, env)
    expect(res.code, res.stderr).toBe(0)
    expect(res.stderr).toMatch(/forkpoint: recorded run-[0-9a-f]{20} \(4 steps\)/)
    const [summary] = await listRuns({ dir })
    expect(summary).toMatchObject({ entrypoint: 'llmAgent.mjs', steps: 4, llmCalls: 4, status: 'ok' })
    const run = await loadRun({ spec: summary!.runId, dir })
    expect(run.meta).toMatchObject({ capture: 'register', exitCode: 0 })
  })
})
