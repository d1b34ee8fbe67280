import type { ServerResponse } from 'node:http'
import { isForkpointError } from '../errors/index.js'

/** A proxy's refusal or failure as a JSON error body, its code also in `x-forkpoint-error`; a response already begun is cut off. */
export function failResponse(res: ServerResponse, status: number, err: unknown): void {
  if (res.headersSent) return void res.destroy()
  const message = err instanceof Error ? err.message : String(err)
  const code = isForkpointError(err) ? err.code : 'forkpoint_effects_proxy_error'
  res.writeHead(status, { 'content-type': 'application/json', 'x-forkpoint-error': code })
  res.end(JSON.stringify({ error: { type: code, message } }))
}
