import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { fp } from './cli.js'

describe('an agent that does not read a response body', () => {
  let server: FakeLlmServer
  beforeAll(async () => {
    server = await startFakeLlmServer()
  })
  afterAll(async () => server.close())

  for (const [how, tail] of [['ends on its own', ''], ['calls process.exit', 'process.exit(0)']] as const) {
    it(`still records the exchange, and its replay serves it (the agent ${how})`, async () => {
      const dir = tempDir('unread-body')
      await initWorkspace({ dir })
      const agent = `const r = await fetch(process.env.ECHO_URL, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n":1}' }); console.log('status', r.status); ${tail}`
      const command = [process.execPath, '--input-type=module', '-e', agent]
      const rec = await fp(['run', '--record', '--json', '--', ...command], { cwd: dir, env: { ECHO_URL: `${server.url}/v1/echo` } })
      expect(rec.code, rec.stderr).toBe(0)
      expect(JSON.parse(rec.stdout).steps).toBe(1)
      const shown = JSON.parse((await fp(['runs', 'show', 'latest', '--json'], { cwd: dir })).stdout).run
      expect(shown.steps[0].output).toMatchObject({ status: 200 })
      // on its own the process waits for the body; process.exit keeps whatever had arrived
      if (!tail) expect(shown.steps[0].output).toMatchObject({ json: { echo: { n: 1 } } })
      const rep = await fp(['replay', 'latest', '--json'], { cwd: dir, env: { ECHO_URL: `${server.url}/v1/echo` } })
      expect(rep.code, rep.stderr).toBe(0)
      expect(JSON.parse(rep.stdout)).toMatchObject({ served: 1, diff: { status: 'exact_match' } })
    })
  }
})
