import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FanoutEvent, Workspace, queueRunner, speculate } from '../../src/index.js'
import { CLI } from '../helpers/cli.js'
import { type RedisServer, startRedis } from '../helpers/redisServer.js'
import { sharedRegistry, type SharedRegistry } from '../helpers/sharedServices.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/until.js'

/** A queue of its own, which no worker ever takes jobs from. */
let redis: RedisServer
let registry: SharedRegistry
const key = 'no-worker-test-key-0123456789abcdef'

beforeAll(async () => {
  redis = await startRedis()
  registry = sharedRegistry()
}, 60_000)

afterAll(async () => {
  redis?.stop()
})

async function workspace(): Promise<Workspace> {
  const dir = tempDir('no-worker-ws')
  writeFileSync(join(dir, 'notes.md'), 'v1\n')
  return Workspace.open({ dir })
}

describe('a fan-out with no worker', () => {
  it('says, once the notice delay has passed, that no worker has taken a job, and keeps waiting until cancelled', async () => {
    await using ws = await workspace()
    const events: FanoutEvent[] = []
    const runner = queueRunner({ queue: redis.queue, key, registry: `oci://${registry.host}/no-worker`, noWorkerNoticeMs: 200, onEvent: (e) => events.push(e) })
    const cancel = new AbortController()
    let settled = false
    const applied = speculate(['true', 'true'], { runner })
      .apply(ws, { signal: cancel.signal })
      .catch((err: unknown) => err)
      .finally(() => (settled = true))
    await until(() => events.some((e) => e.type === 'no-worker'), 'the no-worker notice')
    expect(events.filter((e) => e.type === 'no-worker')).toEqual([{ type: 'no-worker', waitedMs: 200, jobs: 2 }])
    expect(settled).toBe(false)
    cancel.abort()
    await applied
  }, 120_000)

  it('forkpoint speculate --queue prints the notice on stderr after --worker-timeout, even under --json', async () => {
    const dir = tempDir('no-worker-cli')
    writeFileSync(join(dir, 'notes.md'), 'v1\n')
    const registryUrl = `oci://${registry.host}/no-worker-cli`
    const args = ['-C', dir, 'speculate', '--json', '--queue', redis.queue, '--registry', registryUrl, '--worker-timeout', '200ms', '-c', 'true']
    const child = spawn(CLI, args, { env: { PATH: process.env['PATH'], HOME: process.env['HOME'], FORKPOINT_QUEUE_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    try {
      await until(() => stderr.includes('fan-out: no worker has taken any of the 1 job(s) in 0.2s; still waiting') || child.exitCode !== null, 'the notice')
      expect(child.exitCode, stderr).toBeNull()
    } finally {
      child.kill('SIGINT')
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)))
    }
  }, 120_000)
})
