import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { UsageError } from '../errors/index.js'

/** What a listener checks before it reads a request. */
export interface Guard {
  /** TCP: the Host values it answers to, and the Origins of its own pages; null on a Unix socket (no browser reaches one). */
  hosts: Set<string> | null
  origins: Set<string> | null
  /** The bearer token every request carries, or null (a Unix socket). */
  token: string | null
}

/** A refusal: the HTTP status and the error to answer with. */
export interface Refusal {
  status: number
  error: UsageError
  headers?: Record<string, string>
}

/**
 * Why a request is refused before anything of it is read, or null: a Host not the
 * listener's own (421, DNS rebinding), an Origin not its own (403, a page elsewhere), no or
 * a wrong bearer token (401) unless the request is `public` (the web view's own files, the
 * same in every install: the page has to load before it can send the token), a POST whose
 * body is not declared `application/json` (415: a browser sends a cross-site `text/plain`
 * POST without asking first).
 */
export function refusal(req: IncomingMessage, guard: Guard, { public: isPublic }: { public: boolean }): Refusal | null {
  const host = req.headers.host ?? ''
  if (guard.hosts !== null && !guard.hosts.has(host))
    return { status: 421, error: new UsageError(`this service answers only as ${[...guard.hosts].join(', ')}, not as ${JSON.stringify(host)}`) }
  const origin = req.headers.origin
  if (origin !== undefined && guard.origins !== null && !guard.origins.has(origin))
    return { status: 403, error: new UsageError(`requests from pages of ${JSON.stringify(origin)} are refused: this service serves only its own pages`) }
  if (guard.token !== null && !isPublic && !authorized(req.headers.authorization, guard.token))
    return {
      status: 401,
      error: new UsageError('this service needs its bearer token: Authorization: Bearer <token> (`serve` writes it to .forkpoint/service-token; `ui` prints it in its URL)'),
      headers: { 'www-authenticate': 'Bearer' },
    }
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  if (req.method === 'POST' && type !== 'application/json')
    return { status: 415, error: new UsageError(`a request body must be Content-Type: application/json (got ${JSON.stringify(type || 'none')})`) }
  return null
}

function authorized(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '')
  const expected = Buffer.from(`Bearer ${token}`)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
