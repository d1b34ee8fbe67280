import { EffectsPolicyError } from '../errors/index.js'
import type { Store } from '../store/Store.js'
import { readStateTextOrNull } from '../store/readStateFile.js'
import { EFFECT_CLASSES, type EffectClass } from '../objects/Ledger.js'

/** The policy file's name inside the store directory (`.forkpoint/effects.json`). */
export const HTTP_POLICY_FILE = 'effects.json'

/** One rule: requests to `host` with `method` whose path matches `path` are of `class`. */
export interface HttpRule {
  /** `mail.example.com`, `127.0.0.1:8025`, `*.example.com`: matched against the URL's host with port, and without. */
  host: string
  /** `POST`, or `*` for any. @default '*' */
  method: string
  /** A path pattern: `*` matches within one segment, `**` across segments. @default '/**' */
  path: string
  class: EffectClass
}

/** The HTTP effects policy: the first matching rule classes a request. */
export interface HttpPolicy {
  rules: HttpRule[]
  /** The class of an unlisted request whose method is not GET, HEAD or OPTIONS. @default 'read' */
  default: EffectClass
}

/** The methods that read: unlisted, they are `read`. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** The store's policy, or null when it has no policy file (then no request is classed). @throws {EffectsPolicyError} (exit 2) a malformed file */
export async function loadHttpPolicy(store: Store): Promise<HttpPolicy | null> {
  const file = store.path(HTTP_POLICY_FILE)
  const text = readStateTextOrNull(file)
  return text === null ? null : parseHttpPolicy(text, file)
}

/** Parse a policy file's text. @throws {EffectsPolicyError} (exit 2) naming the file and what is wrong */
export function parseHttpPolicy(text: string, file: string): HttpPolicy {
  const bad = (what: string) => new EffectsPolicyError(`${file}: ${what} (see docs/effects.md, "The HTTP policy")`, { file })
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    throw bad(`not valid JSON: ${(err as Error).message}`)
  }
  if (!isObject(doc) || !Array.isArray(doc['rules'])) throw bad('must be an object with a "rules" array')
  const fallback = doc['default'] ?? 'read'
  if (!isClass(fallback)) throw bad(`"default" must be one of ${EFFECT_CLASSES.join(', ')}`)
  const rules = doc['rules'].map((rule: unknown, i: number): HttpRule => {
    const where = `rules[${i}]`
    if (!isObject(rule)) throw bad(`${where} must be an object`)
    const { host, method = '*', path = '/**' } = rule
    if (typeof host !== 'string' || host === '') throw bad(`${where}.host must be a non-empty string`)
    if (typeof method !== 'string' || !/^([A-Za-z]+|\*)$/.test(method)) throw bad(`${where}.method must be an HTTP method or "*"`)
    if (typeof path !== 'string' || !path.startsWith('/')) throw bad(`${where}.path must be a pattern starting with "/"`)
    if (!isClass(rule['class'])) throw bad(`${where}.class must be one of ${EFFECT_CLASSES.join(', ')}`)
    return { host: host.toLowerCase(), method: method.toUpperCase(), path, class: rule['class'] }
  })
  return { rules, default: fallback }
}

/**
 * A request's class, or null when it is not an effect the policy knows (it passes through
 * untouched): the first rule that matches; else `read` for GET, HEAD and OPTIONS and the
 * policy's `default` for other methods, where a `read` default also means "pass through".
 */
export function classifyRequest(policy: HttpPolicy, method: string, url: string): { class: EffectClass; listed: boolean } | null {
  const { host, hostname, pathname } = new URL(url)
  const verb = method.toUpperCase()
  const rule = policy.rules.find(
    (r) => (r.method === '*' || r.method === verb) && (glob(r.host, '.').test(host) || glob(r.host, '.').test(hostname)) && glob(r.path, '/').test(pathname),
  )
  if (rule) return { class: rule.class, listed: true }
  if (READ_METHODS.has(verb) || policy.default === 'read') return null
  return { class: policy.default, listed: false }
}

/** Whether any rule names this host (a tunnel to it would hide requests the policy classes). */
export function policyNamesHost(policy: HttpPolicy, host: string): boolean {
  return policy.rules.some((r) => glob(r.host, '.').test(host) || glob(r.host, '.').test(host.replace(/:\d+$/, '')))
}

/** Each rule's patterns as compiled once: the proxy classes every request against them. */
const compiled = new Map<string, RegExp>()

/** `*` matches within one `sep`-separated part, `**` across parts; everything else is literal. */
function glob(pattern: string, sep: string): RegExp {
  const key = `${sep}${pattern}`
  let re = compiled.get(key)
  if (re === undefined) compiled.set(key, (re = compileGlob(pattern, sep)))
  return re
}

function compileGlob(pattern: string, sep: string): RegExp {
  const within = `[^${sep === '/' ? '/' : '.'}]*`
  const body = pattern
    .split('**')
    .map((part) => part.split('*').map(escapeRegExp).join(within))
    .join('.*')
  // host names are case-insensitive, paths are not
  return new RegExp(`^${body}$`, sep === '.' ? 'i' : '')
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isClass(value: unknown): value is EffectClass {
  return typeof value === 'string' && (EFFECT_CLASSES as readonly string[]).includes(value)
}
