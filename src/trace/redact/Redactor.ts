import { createHash } from 'node:crypto'
import { UsageError } from '../../errors/index.js'
import { assertDepth } from '../../util/jsonDepth.js'
import type { JsonValue, RedactionMode } from '../../objects/Run.js'
import { LiteralSet, type Span } from './LiteralSet.js'
import { pathRuleRegex } from './redactionPath.js'
import { collectJsonWebTokens, collectPrivateKeys } from './secretScanners.js'
import { ANY_SECRET_PATTERN, MIN_ENV_SECRET_LENGTH, SECRET_MARK, SECRET_PATTERNS, SENSITIVE_ENV_NAME, SENSITIVE_KEY } from './secretPatterns.js'

/** User rules, on top of the built-in secret detection. */
export interface RedactionRules {
  /** Object keys or header names (case-insensitive) whose values are secrets. */
  keys?: string[]
  /** JSON paths into step input, output and meta (each rooted at `$`): `$.a.b[0]`, `$.messages[*].content`, `$..password`. */
  paths?: string[]
  /** Regular expressions (source text); every match is redacted. */
  patterns?: string[]
}

export interface RedactionPolicy {
  mode: RedactionMode
  rules?: RedactionRules
}

/** Values under these keys describe the shape of an exchange, not its content: content mode keeps them. */
const STRUCTURAL_KEYS = new Set([
  'model',
  'role',
  'type',
  'api',
  'provider',
  'method',
  'status',
  'finish_reason',
  'stop_reason',
  'object',
  'content-type',
  'encoding',
  'event',
  'name',
])

/**
 * Removes secrets from everything before it is recorded; in `content` mode also replaces
 * every other string by `[redacted sha256:<hash>]`. Stateful on purpose: a secret seen
 * once (a header value, an env value, a value under a sensitive key) is redacted from
 * then on wherever it reappears, in any later step of the session.
 */
export class Redactor {
  readonly mode: RedactionMode
  private readonly sensitiveKeys: Set<string>
  private readonly pathRules: RegExp[]
  private readonly userPatterns: RegExp[]
  private readonly known = new LiteralSet()

  constructor({ mode = 'secrets', rules = {}, env }: { mode?: RedactionMode; rules?: RedactionRules; env: NodeJS.ProcessEnv }) {
    this.mode = mode
    this.sensitiveKeys = new Set((rules.keys ?? []).map((k) => k.toLowerCase()))
    this.pathRules = (rules.paths ?? []).map(pathRuleRegex)
    this.userPatterns = (rules.patterns ?? []).map(userPattern)
    for (const [name, value] of Object.entries(env)) {
      if (value && SENSITIVE_ENV_NAME.test(name) && value.length >= MIN_ENV_SECRET_LENGTH) this.learn(value)
    }
  }

  /** Check user rules before a recording starts: a path or pattern that does not parse is a UsageError (exit 2). */
  static checkRules(rules: RedactionRules): void {
    void new Redactor({ rules, env: {} })
  }

  /** Treat `value` as a secret from now on. */
  learn(value: string): void {
    if (value.length < 4 || value === SECRET_MARK || this.known.has(value)) return
    this.known.add(value)
  }

  isSensitiveKey(key: string): boolean {
    return SENSITIVE_KEY.test(key) || this.sensitiveKeys.has(key.toLowerCase())
  }

  /**
   * Secrets out of free text (an error message, a command line, a step name, a URL).
   * Every detector runs on the original text and the spans they find are merged before
   * anything is replaced, so a learned value inside a longer token (`Bearer <value><more>`)
   * never hides the rest of that token from the patterns.
   */
  redactText(text: string): string {
    const spans: Span[] = []
    this.known.collect(text, spans)
    if (ANY_SECRET_PATTERN.test(text)) {
      for (const re of SECRET_PATTERNS) collectSpans(text, re, spans)
      collectPrivateKeys(text, spans)
      collectJsonWebTokens(text, spans)
    }
    for (const re of this.userPatterns) collectSpans(text, re, spans)
    return spans.length > 0 ? markSpans(text, spans) : text
  }

  /** A command line without secrets: values of `--token X`-style flags too, not only `--token=X`. */
  redactArgv(argv: string[]): string[] {
    return argv.map((arg, i) => {
      const flag = /^--?([A-Za-z0-9_-]+)$/.exec(argv[i - 1] ?? '')
      return flag && this.isSensitiveKey(flag[1]!) ? SECRET_MARK : this.redactText(arg)
    })
  }

  /** A redacted JSON copy of `value` (never mutates it): secrets always, content in content mode. */
  redact(value: unknown): JsonValue {
    const copy = toJson(value)
    this.collect(copy, '$', 0)
    return this.replace(copy, '$', false, 0)
  }

  /** Pass 1: learn the values under sensitive keys or user paths, so pass 2 finds them everywhere. */
  private collect(value: JsonValue, path: string, depth: number): void {
    if (typeof value !== 'object' || value === null) return
    assertDepth(depth + 1)
    for (const [key, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
      const child = this.pathTo(path, key)
      if (typeof v === 'string' && this.isSecretAt(key, child)) this.learn(v)
      else this.collect(v, child, depth + 1)
    }
  }

  private replace(value: JsonValue, path: string, structural: boolean, depth: number): JsonValue {
    if (typeof value === 'string') {
      const clean = this.redactText(value)
      return this.mode === 'content' && !structural ? contentMark(clean) : clean
    }
    if (typeof value !== 'object' || value === null) return value
    const child = (key: string | number, v: JsonValue): JsonValue => {
      const at = this.pathTo(path, key)
      return this.isSecretAt(key, at) ? SECRET_MARK : this.replace(v, at, typeof key === 'string' && STRUCTURAL_KEYS.has(key.toLowerCase()), depth + 1)
    }
    if (Array.isArray(value)) return value.map((v, i) => child(i, v))
    const out: { [key: string]: JsonValue } = {}
    for (const [k, v] of Object.entries(value)) out[k] = child(k, v)
    return out
  }

  /**
   * A child's path, for the user's path rules alone: without any, none is built (a
   * path per value costs time in its depth, and a payload from elsewhere may nest
   * thousands of values a thousand deep).
   */
  private pathTo(parent: string, key: string | number): string {
    return this.pathRules.length === 0 ? parent : childPath(parent, key)
  }

  /** A value under a sensitive key, or at a path a user rule names. */
  private isSecretAt(key: string | number, path: string): boolean {
    return (typeof key === 'string' && this.isSensitiveKey(key)) || this.matchesPath(path)
  }

  private matchesPath(path: string): boolean {
    return this.pathRules.some((re) => re.test(path))
  }
}

/** A `--redact-pattern` as a global regex (a UsageError, exit 2, when it is not one). */
function userPattern(source: string): RegExp {
  try {
    return new RegExp(source, 'g')
  } catch (err) {
    throw new UsageError(`--redact-pattern ${JSON.stringify(source)} is not a regular expression: ${(err as Error).message}`, { pattern: source })
  }
}

/** A JSON copy: what JSON.stringify would keep (toJSON honoured, undefined and functions dropped). */
export function toJson(value: unknown): JsonValue {
  if (value === undefined) return null
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  try {
    return JSON.parse(JSON.stringify(value)) as JsonValue
  } catch (err) {
    if (err instanceof RangeError && /call stack/i.test(err.message)) assertDepth(Infinity, 'a recorded payload')
    throw err
  }
}

export function contentMark(text: string): string {
  return `[redacted sha256:${createHash('sha256').update(text.normalize('NFC')).digest('hex')}]`
}

/** How a payload location is written: `$.a.b[0]`, `$["odd key"]`. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`
}

/** Where `re` matches in `text`, each match less its `keep` group (a prefix such as `Bearer `, kept in the clear). */
function collectSpans(text: string, re: RegExp, spans: Span[]): void {
  re.lastIndex = 0
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++
      continue
    }
    const start = m.index + (m.groups?.['keep']?.length ?? 0)
    if (start < m.index + m[0].length) spans.push([start, m.index + m[0].length])
  }
}

/** `text` with each run of overlapping or touching spans replaced by one SECRET_MARK. */
function markSpans(text: string, spans: Span[]): string {
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1])
  let out = ''
  let at = 0
  let i = 0
  while (i < spans.length) {
    const start = spans[i]![0]
    let end = spans[i]![1]
    while (++i < spans.length && spans[i]![0] <= end) end = Math.max(end, spans[i]![1])
    out += text.slice(at, start) + SECRET_MARK
    at = end
  }
  return out + text.slice(at)
}
