import { describe, expect, it } from 'vitest'
import { EffectsPolicyError } from '../../src/errors/index.js'
import { classifyRequest, parseHttpPolicy } from '../../src/effects/httpPolicy.js'

const policy = parseHttpPolicy(
  JSON.stringify({
    rules: [
      { host: 'mail.example.com', method: 'POST', path: '/v1/send', class: 'irreversible' },
      { host: '*.pay.example.com', method: 'post', path: '/charges/*', class: 'irreversible' },
      { host: 'api.example.com', method: '*', path: '/v1/**/status', class: 'idempotent' },
      { host: '127.0.0.1:*', method: 'GET', path: '/audit', class: 'idempotent' },
    ],
  }),
  '/x/effects.json',
)
const classOf = (method: string, url: string, p = policy) => classifyRequest(p, method, url)?.class ?? null

describe('the HTTP effects policy', () => {
  it('matches host, method and path pattern; the first matching rule wins', () => {
    expect(classOf('POST', 'https://mail.example.com/v1/send')).toBe('irreversible')
    expect(classOf('POST', 'https://MAIL.example.com/v1/send?x=1')).toBe('irreversible') // host names are case-insensitive, the query is not the path
    expect(classOf('PUT', 'https://mail.example.com/v1/send')).toBe(null) // another method
    expect(classOf('POST', 'https://mail.example.com/v1/send/2')).toBe(null) // another path
    expect(classOf('POST', 'https://other.example.com/v1/send')).toBe(null) // another host
    expect(classOf('POST', 'https://eu.pay.example.com/charges/ch_1')).toBe('irreversible') // '*' in a host: one label
    expect(classOf('POST', 'https://a.b.pay.example.com/charges/ch_1')).toBe(null)
    expect(classOf('POST', 'https://eu.pay.example.com/charges/ch_1/refund')).toBe(null) // '*' in a path: one segment
    expect(classOf('DELETE', 'https://api.example.com/v1/jobs/7/status')).toBe('idempotent') // '**': any segments; '*' method: any
    expect(classOf('PATCH', 'https://api.example.com/V1/jobs/7/status')).toBe(null) // paths are case-sensitive
    expect(classOf('GET', 'http://127.0.0.1:8025/audit')).toBe('idempotent') // host with port; a listed GET takes its class
  })

  it('an unlisted GET (or HEAD, OPTIONS) is read and passes through; another method takes "default" (read unless set)', () => {
    expect(classifyRequest(policy, 'GET', 'https://mail.example.com/v1/send')).toBe(null)
    expect(classifyRequest(policy, 'POST', 'https://elsewhere.example.com/')).toBe(null)
    const strict = parseHttpPolicy(JSON.stringify({ rules: [], default: 'irreversible' }), 'f')
    expect(classifyRequest(strict, 'POST', 'https://elsewhere.example.com/')).toEqual({ class: 'irreversible', listed: false })
    expect(classifyRequest(strict, 'HEAD', 'https://elsewhere.example.com/')).toBe(null)
  })

  it.each([
    ['{ not json', /effects\.json: not valid JSON/],
    ['[]', /must be an object with a "rules" array/],
    ['{"rules": {}}', /must be an object with a "rules" array/],
    ['{"rules": [], "default": "maybe"}', /"default" must be one of read, idempotent, irreversible/],
    ['{"rules": [42]}', /rules\[0\] must be an object/],
    ['{"rules": [{"method": "POST", "class": "read"}]}', /rules\[0\]\.host must be a non-empty string/],
    ['{"rules": [{"host": "h", "method": "PO ST", "class": "read"}]}', /rules\[0\]\.method must be an HTTP method/],
    ['{"rules": [{"host": "h", "path": "send", "class": "read"}]}', /rules\[0\]\.path must be a pattern starting with "\/"/],
    ['{"rules": [{"host": "h", "class": "dangerous"}]}', /rules\[0\]\.class must be one of read, idempotent, irreversible/],
  ])('refuses %s with a config error (exit 2) naming the file and the fault', (text, message) => {
    let error: unknown
    try {
      parseHttpPolicy(text, '/ws/.forkpoint/effects.json')
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(EffectsPolicyError)
    expect((error as EffectsPolicyError).exitCode).toBe(2)
    expect((error as Error).message).toMatch(message)
    expect((error as Error).message).toMatch(/^\/ws\/\.forkpoint\/effects\.json: /)
  })
})
