import { z } from 'zod'
import { type AnyOperation, offeredOn, remoteInput } from '../operations/operation.js'
import { OPERATIONS } from '../operations/table.js'

const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, exitCode: { type: 'integer' }, message: { type: 'string' }, data: { type: 'object' } },
      required: ['code', 'exitCode', 'message'],
    },
  },
  required: ['error'],
} as const

const ERROR_RESPONSE = {
  description: 'a forkpoint error: HTTP 400 usage (exit 2), 409 conflict (3), 403 offline (4), 422 corrupt (5), 500 internal (6)',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
}

const HEALTH_SCHEMA = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    version: { type: 'string' },
    workspace: { type: 'string' },
    served: { type: 'integer', description: 'operations answered so far' },
    scan: { type: 'string', description: "'warm' (the watcher knows the workspace), 'full', or why the watcher was lost" },
  },
  required: ['ok', 'version', 'workspace', 'served', 'scan'],
} as const

/** Where the document says the service listens, and whether its requests carry the bearer token. */
export interface OpenApiOptions {
  /** `http://host:port`, or `unix:/path` (no URL a browser can open: the document then names no server) */
  address: string
  bearer: boolean
}

/**
 * The service's OpenAPI 3.1 document, made from the operation table: one POST per operation
 * offered over HTTP, its body the operation's arguments and its answer the operation's
 * result schema; one GET per query of the web view, its arguments query parameters.
 */
export function openApiDocument(version: string, { address, bearer }: OpenApiOptions, table: readonly AnyOperation[] = OPERATIONS): object {
  const paths: Record<string, object> = {
    '/v1/health': {
      get: {
        operationId: 'health',
        summary: 'Whether the service is up, and how it scans the workspace',
        responses: { 200: { description: 'up', content: { 'application/json': { schema: HEALTH_SCHEMA } } }, default: ERROR_RESPONSE },
      },
    },
  }
  const schemas: Record<string, object> = { Error: ERROR_SCHEMA }
  for (const op of table.filter((op) => offeredOn(op, 'http'))) {
    if (op.query) paths[`/v1/view/${op.name}`] = { get: queryPath(op, schemas) }
    else paths[`/v1/${op.name}`] = { post: operationPath(op, schemas) }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'forkpoint service', version },
    ...(address.startsWith('http') ? { servers: [{ url: address }] } : {}),
    paths,
    components: {
      schemas,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: "the token in the store's service-token file (TCP only; a Unix socket needs none)" } },
    },
    ...(bearer ? { security: [{ bearer: [] }] } : {}),
  }
}

function operationPath(op: AnyOperation, schemas: Record<string, object>): object {
  const jsonSchema = jsonSchemaInto(schemas, op.name)
  return {
    operationId: op.name,
    summary: op.description,
    requestBody: { required: false, content: { 'application/json': { schema: jsonSchema(z.object(remoteInput(op)).strict(), 'input') } } },
    responses: {
      200: {
        description: "the operation's result; with `Accept: text/event-stream`, server-sent events: `progress` while it works, then `result` or `error`",
        content: { 'application/json': { schema: jsonSchema(op.output, 'output') }, 'text/event-stream': { schema: { type: 'string' } } },
      },
      default: ERROR_RESPONSE,
    },
  }
}

function queryPath(op: AnyOperation, schemas: Record<string, object>): object {
  const jsonSchema = jsonSchemaInto(schemas, `view_${op.name}`)
  const { properties = {}, required = [] } = jsonSchema(z.object(op.input), 'input') as { properties?: Record<string, object>; required?: string[] }
  return {
    operationId: `view_${op.name}`,
    summary: op.description,
    parameters: Object.entries(properties).map(([name, schema]) => ({ name, in: 'query', required: required.includes(name), schema })),
    responses: { 200: { description: "the query's result", content: { 'application/json': { schema: jsonSchema(op.output, 'output') } } }, default: ERROR_RESPONSE },
  }
}

/**
 * Schemas as JSON Schema (draft 2020-12, as OpenAPI 3.1 takes it), less their `$schema`;
 * the definitions a schema refers to (a recursive JSON value) become components named for
 * the operation, where the document's `$ref`s can reach them.
 */
function jsonSchemaInto(components: Record<string, object>, prefix: string) {
  const relink = (schema: object): object => JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', `"#/components/schemas/${prefix}_`)) as object
  return (schema: z.ZodType, io: 'input' | 'output'): object => {
    const { $schema: _schema, $defs = {}, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as { $schema?: string; $defs?: Record<string, object> }
    for (const [id, definition] of Object.entries($defs)) components[`${prefix}_${id}`] = relink(definition)
    return relink(rest)
  }
}
