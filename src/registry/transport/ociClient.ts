import { RegistryAuthError, RegistryRequestError } from '../../errors/index.js'
import type { Credentials } from './findCredentials.js'
import { readCapped } from './readCapped.js'
import { echoBody, redactSecrets } from './redactSecrets.js'

export interface OciClientOptions {
  host: string
  repository: string
  /** Plain HTTP for a host that is not loopback (loopback hosts always use HTTP, as Docker does). */
  insecure?: boolean
  credentials: Credentials | null
  fetch?: typeof fetch
}

export interface RequestOptions {
  headers?: Record<string, string>
  body?: Buffer
  signal?: AbortSignal | undefined
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])
const RETRYABLE = new Set([429, 502, 503, 504])
const ATTEMPTS = 3

export function isLoopback(host: string): boolean {
  const name = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')
  return name === 'localhost' || name === '::1' || /^127\./.test(name)
}

/**
 * HTTP for one repository of a distribution-API registry: answers 401 challenges with
 * basic auth or a bearer token (fetched from the challenge's realm with our
 * credentials), follows redirects itself so credentials never travel to another origin,
 * and retries network failures and 429/5xx responses a few times.
 */
export class OciClient {
  readonly base: string
  readonly repository: string
  private readonly host: string
  private readonly credentials: Credentials | null
  private readonly fetch: typeof fetch
  private authorization: string | null = null

  constructor({ host, repository, insecure = false, credentials, fetch: fetchFn = globalThis.fetch }: OciClientOptions) {
    this.host = host
    this.repository = repository
    this.base = `${insecure || isLoopback(host) ? 'http' : 'https'}://${host}`
    this.credentials = credentials
    this.fetch = fetchFn
  }

  /** `/v2/<repo>/<rest>` as an absolute URL. */
  url(rest: string): URL {
    return new URL(`/v2/${this.repository}/${rest}`, this.base)
  }

  async request(method: string, url: URL, options: RequestOptions = {}): Promise<Response> {
    let response = await this.send(method, url, options)
    if (response.status === 401) {
      await response.body?.cancel()
      this.authorization = await this.answerChallenge(response.headers.get('www-authenticate'), method)
      response = await this.send(method, url, options)
      if (response.status === 401) {
        await response.body?.cancel()
        throw this.authError()
      }
    }
    return response
  }

  private authError(): RegistryAuthError {
    return new RegistryAuthError(
      this.credentials
        ? `registry ${this.host} refused the credentials of user ${this.credentials.username}`
        : `registry ${this.host} requires credentials: run 'docker login ${this.host}' or set FORKPOINT_REGISTRY_USERNAME and FORKPOINT_REGISTRY_PASSWORD`,
      { host: this.host, user: this.credentials?.username ?? null },
    )
  }

  /** One request with retries and redirects; Authorization goes only to the registry's own origin. */
  private async send(method: string, url: URL, { headers = {}, body, signal }: RequestOptions): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      let response: Response
      try {
        response = await this.followRedirects(method, url, headers, body, signal)
      } catch (err) {
        if (signal?.aborted || attempt >= ATTEMPTS || err instanceof RegistryRequestError) throw this.wrap(err, method, url)
        await delay(attempt)
        continue
      }
      if (!RETRYABLE.has(response.status) || attempt >= ATTEMPTS) return response
      await response.body?.cancel()
      await delay(attempt)
    }
  }

  private async followRedirects(method: string, url: URL, headers: Record<string, string>, body: Buffer | undefined, signal?: AbortSignal): Promise<Response> {
    let current = url
    for (let hop = 0; hop < 6; hop++) {
      const sameOrigin = current.origin === new URL(this.base).origin
      const allHeaders = { ...headers, ...(sameOrigin && this.authorization ? { authorization: this.authorization } : {}) }
      const init: RequestInit = { method, headers: allHeaders, redirect: 'manual' }
      if (body !== undefined) init.body = body
      if (signal) init.signal = signal
      const response = await this.fetch(current, init)
      const location = response.headers.get('location')
      if (!REDIRECTS.has(response.status) || !location) return response
      await response.body?.cancel()
      current = new URL(location, current)
      if (response.status === 303 && method !== 'HEAD') {
        method = 'GET'
        body = undefined
      }
    }
    throw new RegistryRequestError(`${method} ${url.pathname}: too many redirects`, { url: url.href })
  }

  private async answerChallenge(header: string | null, method: string): Promise<string> {
    const challenge = parseChallenge(header ?? '')
    if (challenge.scheme === 'basic') {
      if (!this.credentials) throw this.authError()
      return `Basic ${basicAuth(this.credentials)}`
    }
    if (challenge.scheme === 'bearer' && challenge.params['realm']) return `Bearer ${await this.fetchToken(challenge.params, method)}`
    throw new RegistryAuthError(`registry ${this.host} asked for unsupported authentication: ${header ?? 'none'}`, { host: this.host })
  }

  private async fetchToken(params: Record<string, string>, method: string): Promise<string> {
    const realm = new URL(params['realm']!)
    if (params['service']) realm.searchParams.set('service', params['service'])
    const actions = method === 'GET' || method === 'HEAD' ? 'pull' : 'pull,push'
    realm.searchParams.set('scope', params['scope'] ?? `repository:${this.repository}:${actions}`)
    const headers: Record<string, string> = {}
    if (this.credentials) headers['authorization'] = `Basic ${basicAuth(this.credentials)}`
    const response = await this.fetch(realm, { headers }).catch((err: unknown) => {
      throw this.wrap(err, 'GET', realm)
    })
    if (response.status === 401 || response.status === 403) {
      throw new RegistryAuthError(`token service ${realm.origin} refused ${this.credentials ? `user ${this.credentials.username}` : 'anonymous access'}`, { host: this.host })
    }
    if (!response.ok) throw await this.requestError(response, `token request to ${realm.origin}`)
    const json = parseTokenResponse(await readCapped(response.body, TOKEN_RESPONSE_BYTES, `the token from ${realm.origin}`))
    const token = json.token ?? json.access_token
    if (!token) throw new RegistryAuthError(`token service ${realm.origin} returned no token`, { host: this.host })
    return token
  }

  /** Everything this client knows that an error must never print: the password, its Basic form, the token in use. */
  secrets(): string[] {
    const known = this.authorization ? [this.authorization.replace(/^\S+\s+/, '')] : []
    if (this.credentials) known.push(this.credentials.password, basicAuth(this.credentials))
    return known
  }

  /** A failed response as an error naming the status, the registry's error codes or a redacted bit of its body. */
  requestError(response: Response, what: string): Promise<RegistryRequestError> {
    return requestError(response, what, this.secrets())
  }

  private wrap(err: unknown, method: string, url: URL): unknown {
    if (err instanceof RegistryRequestError || (err instanceof Error && err.name === 'AbortError')) return err
    const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err)
    return new RegistryRequestError(`cannot reach ${url.origin} (${method} ${url.pathname}): ${echoBody(cause, this.secrets())}`, { url: redactSecrets(url.href) })
  }
}

function delay(attempt: number): Promise<void> {
  return new Promise((r) => setTimeout(r, 100 * 2 ** attempt))
}

/** `Bearer realm="…",service="…"` -> scheme and parameters. */
export function parseChallenge(header: string): { scheme: string; params: Record<string, string> } {
  const space = header.indexOf(' ')
  const scheme = (space < 0 ? header : header.slice(0, space)).toLowerCase()
  const params: Record<string, string> = {}
  for (const m of header.slice(space + 1).matchAll(/([A-Za-z]+)="([^"]*)"/g)) params[m[1]!.toLowerCase()] = m[2]!
  return { scheme, params }
}

function basicAuth({ username, password }: Credentials): string {
  return Buffer.from(`${username}:${password}`).toString('base64')
}

/** Token answers are small; a larger one is refused rather than read without end. */
const TOKEN_RESPONSE_BYTES = 1024 * 1024
/** Of an error body, only this much is read: it is echoed redacted and cut to a line anyway. */
const ERROR_BODY_BYTES = 64 * 1024

function parseTokenResponse(bytes: Buffer): { token?: string; access_token?: string } {
  try {
    return JSON.parse(bytes.toString('utf8')) as { token?: string; access_token?: string }
  } catch {
    return {}
  }
}

/** Up to `max` bytes of a body, the rest dropped. */
async function readHead(body: AsyncIterable<Uint8Array> | null, max: number): Promise<string> {
  const parts: Buffer[] = []
  let total = 0
  for await (const chunk of body ?? []) {
    parts.push(Buffer.from(chunk))
    total += chunk.length
    if (total >= max) break
  }
  return Buffer.concat(parts).subarray(0, max).toString('utf8')
}

/** A failed response as an error naming the status and the registry's error codes, or a redacted bit of its body. */
export async function requestError(response: Response, what: string, secrets: string[]): Promise<RegistryRequestError> {
  const text = await readHead(response.body, ERROR_BODY_BYTES).catch(() => '')
  let codes: string[] = []
  try {
    codes = ((JSON.parse(text) as { errors?: Array<{ code?: string }> }).errors ?? []).map((e) => String(e.code))
  } catch {
    // not a registry error document
  }
  const detail = codes.length > 0 ? echoBody(codes.join(', '), secrets) : echoBody(text, secrets)
  return new RegistryRequestError(`${what}: HTTP ${response.status}${detail ? ` (${detail})` : ''}`, { status: response.status, codes })
}
