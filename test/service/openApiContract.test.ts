import SwaggerParser from '@apidevtools/swagger-parser'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { snapshotWorkspace } from '../../src/index.js'
import { type AnyOperation, offeredOn, remoteInput } from '../../src/operations/operation.js'
import { OPERATIONS } from '../../src/operations/table.js'
import { type RunningService, startService } from '../../src/service/httpService.js'
import { storeWorkspace } from '../helpers/workspace.js'

interface FieldSchema {
  type?: string
  enum?: unknown[]
  items?: FieldSchema
}

/** A small seeded generator, so a failure names a case that comes back. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32
  }
}

const STRINGS = [
  'HEAD',
  'HEAD~1',
  'main',
  '',
  'nope',
  '../../etc/passwd',
  '/etc/shadow',
  'a'.repeat(300),
  'x\u0000y',
  'latest',
  'run-0',
  'file:///tmp/elsewhere',
  'oci://127.0.0.1:1/x',
]
const NUMBERS = [0, 1, -1, 2.5, 1e12, '7']

/** A value for one field: mostly of its type, sometimes of another. */
function valueFor(schema: FieldSchema, pick: <T>(from: readonly T[]) => T): unknown {
  if (schema.enum) return pick([...schema.enum, 'bogus'])
  switch (schema.type) {
    case 'boolean':
      return pick([true, false, 'yes'])
    case 'integer':
    case 'number':
      return pick(NUMBERS)
    case 'array':
      return pick([[], [valueFor(schema.items ?? {}, pick)], [pick(STRINGS), pick(STRINGS)], 'not a list'])
    default:
      return pick([...STRINGS, 3, null])
  }
}

/** Request bodies for an operation, made from its input schema: some fields, wrong types, unknown fields, bodies that are no object. */
function bodiesFor(op: AnyOperation, count: number, seed: number): unknown[] {
  const next = random(seed)
  const pick = <T>(from: readonly T[]): T => from[Math.floor(next() * from.length)]!
  const { properties = {} } = z.toJSONSchema(z.object(remoteInput(op)), { io: 'input' }) as { properties?: Record<string, FieldSchema> }
  return Array.from({ length: count }, (_, i) => {
    if (i === 0) return pick([[], 'text', null, 42])
    const body: Record<string, unknown> = {}
    for (const [field, schema] of Object.entries(properties)) if (next() < 0.7) body[field] = valueFor(schema, pick)
    if (next() < 0.15) body['unknownField'] = 1
    return body
  })
}

let service: RunningService
let document: { paths: Record<string, unknown> }
const headers = () => ({ authorization: `Bearer ${service.token}`, 'content-type': 'application/json' })
const errorBody = z.object({ error: z.object({ code: z.string(), exitCode: z.number().int(), message: z.string() }) })

beforeAll(async () => {
  const { dir } = await storeWorkspace({ 'a.txt': 'one\n', 'src/b.txt': 'b\n' })
  await snapshotWorkspace({ dir, message: 'first' })
  await fs.writeFile(join(dir, 'a.txt'), 'two\n')
  await snapshotWorkspace({ dir, message: 'second' })
  service = await startService({ dir, listen: '127.0.0.1:0', watch: false })
  document = (await (await fetch(`${service.address}/openapi.json`, { headers: headers() })).json()) as typeof document
})

afterAll(async () => {
  await service?.close()
})

describe("the service's OpenAPI document", () => {
  it('validates as OpenAPI 3.1, with a typed schema for every answer, the bearer scheme and the server', async () => {
    await SwaggerParser.validate(structuredClone(document) as never)
    expect(document).toMatchObject({
      servers: [{ url: service.address }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    })
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const operation of Object.values(methods as Record<string, { operationId?: string; responses: Record<string, { content?: Record<string, { schema: object }> }> }>)) {
        expect(operation.operationId, path).toBeTruthy()
        const schema = operation.responses['200']!.content!['application/json']!.schema as { type?: string; anyOf?: unknown; oneOf?: unknown }
        expect(schema.type === 'object' || Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf), `${path} answers with a typed object`).toBe(true)
      }
    }
    const served = OPERATIONS.filter((op) => offeredOn(op, 'http')).map((op) => (op.query ? `/v1/view/${op.name}` : `/v1/${op.name}`))
    expect(Object.keys(document.paths).sort()).toEqual(['/v1/health', ...served].sort())
  })
})

describe('every operation under schema-driven fuzzing', () => {
  const ops = OPERATIONS.filter((op) => offeredOn(op, 'http'))
  it.each(ops.map((op) => [op.query ? `view ${op.name}` : op.name, op] as const))('%s: no 5xx, and every body matches its schema', async (_name, op) => {
    for (const [i, body] of bodiesFor(op, 16, op.name.length * 7919).entries()) {
      const res = op.query
        ? await fetch(
            `${service.address}/v1/view/${op.name}?${new URLSearchParams(Object.fromEntries(Object.entries(body && typeof body === 'object' ? body : {}).map(([k, v]) => [k, String(v)]))).toString()}`,
            { headers: headers() },
          )
        : await fetch(`${service.address}/v1/${op.name}`, { method: 'POST', headers: headers(), body: JSON.stringify(body) })
      const answer: unknown = await res.json()
      const what = `${op.name} case ${i}: ${JSON.stringify(body)} -> ${res.status} ${JSON.stringify(answer).slice(0, 400)}`
      expect(res.status, what).toBeLessThan(500)
      const parsed = res.status === 200 ? op.output.safeParse(answer) : errorBody.safeParse(answer)
      expect(parsed.success, `${what}\n${parsed.success ? '' : z.prettifyError(parsed.error)}`).toBe(true)
    }
  })
})
