import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { initWorkspace } from '../../src/index.js'
import { LIB } from '../helpers/cli.js'
import { type FakeLlmServer, startFakeLlmServer } from '../helpers/fakeLlmServer.js'
import { tempDir } from '../helpers/tmp.js'
import { FIXTURES, filesContaining, fp } from './cli.js'

const CANARY = { env: 'CANARYdbpass3f8a1c7e9b', header: 'CANARYheader5d2b8e4f1a', field: 'CANARYfield9e4c2a7d6b' }
const KEY = 'c'.repeat(64)

describe('a canary secret in every input channel', () => {
  let server: FakeLlmServer
  beforeAll(async () => {
    server = await startFakeLlmServer()
  })
  afterAll(async () => server.close())

  for (const mode of ['secrets', 'content', 'encrypt'] as const) {
    it(`is absent from every byte written and every command's output (--redact ${mode})`, async () => {
      const dir = tempDir(`canary-${mode}`)
      await initWorkspace({ dir })
      const env = {
        TOOL_URL: server.url,
        DBPASS: CANARY.env,
        HDR_VALUE: CANARY.header,
        FIELD_VALUE: CANARY.field,
        FORKPOINT_LIB: pathToFileURL(LIB).href,
        ...(mode === 'encrypt' ? { FORKPOINT_KEY: KEY } : {}),
      }
      const seen = server.requests.length
      const outputs: string[] = []
      const run = async (args: string[]) => {
        const res = await fp(args, { cwd: dir, env })
        outputs.push(`${res.stdout}\n${res.stderr}`)
        return res
      }
      const agent = [process.execPath, join(FIXTURES, 'canaryAgent.mjs'), '--token', CANARY.env]
      const rec = await run(['run', '--record', '--json', '--redact', mode, '-o', 'out.run.json', '--', ...agent])
      expect(rec.code, rec.stderr).toBe(0)
      expect(JSON.parse(rec.stdout).steps).toBe(3)
      // every secret really travelled: the server saw them in the path, query, headers and body
      const sent = JSON.stringify(server.requests.slice(seen))
      for (const c of Object.values(CANARY)) expect(sent).toContain(c)

      await run(['runs'])
      await run(['runs', '--json', '--step', 'lookup'])
      await run(['runs', 'show', 'latest'])
      await run(['runs', 'show', 'latest', '--json'])
      await run(['runs', 'export', 'latest', '-o', 'exported/again.run.json'])
      // the recorded command carried the secret (redacted): replay is given it again
      const replay = await run(['replay', 'latest', '--json', '--', ...agent])
      if (mode !== 'content') expect(replay.code, replay.stderr).toBe(0)
      await run(['replay', 'out.run.json', '--', ...agent])
      await run(['diff', 'latest', 'out.run.json'])
      await run(['ci', 'replay', '--artifact', 'out.run.json'])
      await run(['ci', 'normalize', 'out.run.json', '-o', 'normal.run.json'])
      await run(['ci', 'diff', '--expected', 'out.run.json', '--actual', 'normal.run.json', '--json'])

      for (const c of Object.values(CANARY)) {
        expect(filesContaining(dir, c), c).toEqual([])
        for (const out of outputs) expect(out, c).not.toContain(c)
      }
      if (mode === 'secrets') expect(outputs.join('\n')).toContain('[redacted secret]')
    })
  }
})
