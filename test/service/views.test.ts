import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { snapshotAgent } from '../../src/index.js'
import { startService } from '../../src/service/httpService.js'
import { storeWorkspace } from '../helpers/workspace.js'

describe("the web view's queries on the service (GET /v1/view/<view>)", () => {
  it('answer on any loopback service, check their query parameters, and leave operations to a service that is not read-only', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const image = await snapshotAgent({ dir, message: 'one' })
    const service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
    try {
      const authorization = `Bearer ${readFileSync(service.tokenFile!, 'utf8').trim()}`
      const get = (path: string) => fetch(`${service.address}${path}`, { headers: { authorization } })
      const graph = await get('/v1/view/graph?limit=5')
      expect(graph.headers.get('x-content-type-options')).toBe('nosniff')
      expect(await graph.json()).toMatchObject({ total: 1, nodes: [{ id: image.id, message: 'one' }] })
      expect(await (await get(`/v1/view/tree?id=${image.id}`)).json()).toMatchObject({ entries: [{ name: 'a.txt' }] })

      const refused = await get('/v1/view/graph?limit=many')
      expect([refused.status, await refused.json()]).toEqual([
        400,
        { error: expect.objectContaining({ code: 'UsageError', message: expect.stringMatching(/^graph: limit/) as string }) },
      ])
      expect((await get('/v1/view/graph?color=red')).status).toBe(400)
      expect((await get('/v1/view/nothing')).status).toBe(404)
      const noTrace = await get(`/v1/view/run?run=${image.id}`)
      expect([noTrace.status, ((await noTrace.json()) as { error: { message: string } }).error.message]).toEqual([400, expect.stringContaining('has no trace layer')])
      expect((await fetch(`${service.address}/v1/log`, { method: 'POST', body: '{}', headers: { authorization, 'content-type': 'application/json' } })).status).toBe(200)
    } finally {
      await service.close()
    }
  })
})
