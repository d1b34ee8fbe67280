import { existsSync } from 'node:fs'
import { request } from 'node:http'
import { describe, expect, it } from 'vitest'
import { startService } from '../../src/service/httpService.js'
import { RunStore } from '../../src/trace/core/RunStore.js'
import { makeRun } from '../trace/runFixtures.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** GET a path on a service's unix socket: status and body. */
function get(socketPath: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ socketPath, path }, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
      .on('error', reject)
      .end()
  })
}

describe('the web view reads runs.db read-only', () => {
  it('a read-only run store refuses every write, and reads what a writer saved', async () => {
    const { store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const empty = RunStore.open({ store, readOnly: true })
    try {
      await expect(empty.save(makeRun([['tool', 'ls', {}, []]]))).rejects.toThrow(/readonly|read-only/i)
    } finally {
      empty.close()
    }
    expect(existsSync(store.path('runs.db'))).toBe(false)
    const writer = RunStore.open({ store })
    await writer.save(makeRun([['tool', 'ls', {}, []]]))
    writer.close()
    const reader = RunStore.open({ store, readOnly: true })
    try {
      expect(reader.list().map((r) => r.runId)).toEqual(['run-0000000000000000000a'])
      await expect(reader.save(makeRun([['tool', 'ls', {}, []]], 'run-0000000000000000000b'))).rejects.toMatchObject({ code: 'SQLITE_READONLY' })
    } finally {
      reader.close()
    }
  })

  it("forkpoint ui's service lists runs without making or writing runs.db", async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const service = await startService({ dir, readOnly: true, watch: false })
    try {
      const runs = await get(service.address.slice('unix:'.length), '/v1/view/runs')
      expect([runs.status, JSON.parse(runs.body)]).toEqual([200, { runs: [] }])
      expect(existsSync(store.path('runs.db'))).toBe(false)
    } finally {
      await service.close()
    }
  })
})
