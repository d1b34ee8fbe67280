import { z } from 'zod'
import { OPERATIONS, OPERATION_NAMES } from './operations.js'
import { VIEWS, VIEW_NAMES } from './views.js'

const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, exitCode: { type: 'integer' }, message: { type: 'string' }, data: { type: 'object' } },
      required: ['code', 'exitCode', 'message'],
    },
  },
} as const

/** The service's OpenAPI 3.1 document: one POST per operation, its body the operation's arguments as the MCP tools take them; one GET per view of the web page, its arguments query parameters. */
export function openApiDocument(version: string, { bearer }: { bearer: boolean }): object {
  const paths: Record<string, object> = {
    '/v1/health': { get: { summary: 'Whether the service is up, and how it scans the workspace', responses: { 200: { description: 'up' } } } },
  }
  for (const name of OPERATION_NAMES) {
    const op = OPERATIONS[name]
    const { $schema: _schema, ...body } = z.toJSONSchema(z.object(op.input).strict()) as Record<string, unknown>
    paths[`/v1/${name}`] = {
      post: {
        operationId: name,
        summary: op.description,
        requestBody: { required: false, content: { 'application/json': { schema: body } } },
        responses: {
          200: {
            description: "the operation's result; with `Accept: text/event-stream`, server-sent events: `progress` while it works, then `result` or `error`",
            content: { 'application/json': { schema: { type: 'object' } }, 'text/event-stream': { schema: { type: 'string' } } },
          },
          default: {
            description: 'a forkpoint error: HTTP 400 usage (exit 2), 409 conflict (3), 403 offline (4), 422 corrupt (5), 500 internal (6)',
            content: { 'application/json': { schema: ERROR_SCHEMA } },
          },
        },
      },
    }
  }
  for (const name of VIEW_NAMES) paths[`/v1/view/${name}`] = { get: viewPath(name) }
  return {
    openapi: '3.1.0',
    info: { title: 'forkpoint service', version },
    paths,
    ...(bearer ? { components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } }, security: [{ bearer: [] }] } : {}),
  }
}

function viewPath(name: (typeof VIEW_NAMES)[number]): object {
  const view = VIEWS[name]
  const { properties = {}, required = [] } = z.toJSONSchema(z.object(view.input), { io: 'input' }) as { properties?: Record<string, object>; required?: string[] }
  return {
    operationId: `view_${name}`,
    summary: view.description,
    parameters: Object.entries(properties).map(([param, schema]) => ({ name: param, in: 'query', required: required.includes(param), schema })),
    responses: {
      200: { description: "the view's JSON", content: { 'application/json': { schema: { type: 'object' } } } },
      default: { description: 'a forkpoint error', content: { 'application/json': { schema: ERROR_SCHEMA } } },
    },
  }
}
