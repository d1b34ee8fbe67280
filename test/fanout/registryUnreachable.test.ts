import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { fp } from '../helpers/cli.js'
import { FanoutTopology } from '../helpers/fanoutTopology.js'
import { tempDir } from '../helpers/tmp.js'

let lan: FanoutTopology

beforeAll(async () => {
  lan = await FanoutTopology.start()
  await lan.startWorker('cut-off', { blockRegistry: true })
}, 180_000)

afterAll(async () => {
  await lan?.stop()
})

it('a worker that cannot reach the registry fails the job with a message naming the registry; the workspace is untouched', async () => {
  const dir = tempDir('fanout-ws')
  writeFileSync(join(dir, 'notes.md'), 'v1\n')
  expect((await fp(dir, 'init')).code).toBe(0)
  const r = await lan.forkpoint(dir, 'explore', '-n', '1', '--queue', lan.queue, '--registry', lan.registry, '--insecure', '--json', '--', 'echo changed > notes.md')
  expect(r.code).toBe(1)
  const o = JSON.parse(r.stdout) as { committed: boolean; results: Array<{ status: string; error: string }> }
  expect(o.committed).toBe(false)
  expect(o.results[0]!.status).toBe('error')
  expect(o.results[0]!.error).toContain(`worker cut-off could not pull the base image from the registry ${lan.registry}`)
  expect(readFileSync(join(dir, 'notes.md'), 'utf8')).toBe('v1\n')
  expect(lan.redis('--scan', '--pattern', 'bull:forkpoint:????????????????-*')).toBe('')
}, 180_000)
