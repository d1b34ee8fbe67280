/** What a redacted secret is replaced by, wherever it appeared. */
export const SECRET_MARK = '[redacted secret]'

/** Object keys and header names whose values are secrets (`x-api-key`, `openai_api_key`, `accessToken`, …). */
export const SENSITIVE_KEY =
  /^(?:.*[_-])?(?:api[_-]?key|secret|secret[_-]?key|client[_-]?secret|password|passwd|pass|passphrase|pwd|token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth|auth[_-]?token|session[_-]?token|session[_-]?id|bearer|authorization|cookie|set-cookie|credentials?|private[_-]?key|signature)$/i

/**
 * An environment variable whose name contains one of these words (any case, anywhere:
 * `DBPASS`, `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`) holds a secret: its value is
 * redacted wherever it later appears. PASS covers PASSWD and PASSWORD. Listed in docs/redaction.md.
 */
export const SENSITIVE_ENV_WORDS = ['PASS', 'PASSWD', 'PASSWORD', 'SECRET', 'TOKEN', 'KEY', 'CREDENTIAL', 'PRIVATE', 'SESSION', 'COOKIE', 'AUTH'] as const

export const SENSITIVE_ENV_NAME = new RegExp(SENSITIVE_ENV_WORDS.join('|'), 'i')

/** Env values shorter than this are too common to hunt for everywhere. */
export const MIN_ENV_SECRET_LENGTH = 8

/**
 * Secret-shaped text found anywhere: each regex's match is replaced, keeping the
 * capture group `keep` (a prefix such as `Bearer ` or `password=`) when it has one.
 * Each runs in time linear in the text (docs/redaction.md): a pattern may start only
 * where a fixed word or delimiter stands, a repeated class is never followed by another
 * that could take the same characters, and the password of a URL is looked for only at
 * each `://` (its scheme is checked behind it), not from every letter of a long word.
 * PEM private keys and JWTs are found by `secretScanners.ts`.
 */
export const SECRET_PATTERNS: RegExp[] = [
  /(?<keep>\bBearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi,
  /(?<keep>\bBasic\s+)[A-Za-z0-9+/=]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /(?<keep>:\/\/(?<=[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:)[^@\s/]+(?=@)/gi,
  // query parameters that carry credentials, in URLs only (as words in prose or JSON they are too common)
  /(?<keep>[?&](?:key|sig|signature|pass|session|sessionid|session_id|code)=)[^&#\s"']+/gi,
  // key=value and "key": "value" inside text (query strings, forms, JSON held as a string, CLI flags)
  /(?<keep>(?:^|[?&\s,{;"'-])(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret|password|passwd|pwd|auth)["']?\s*[:=]\s*["']?)(?!\[redacted)[^\s"'&,;}]{3,}/gi,
]

/** Where `secretScanners.ts` finds anything, text holds one of these. */
const SCANNED_MARKS = ['-----BEGIN ', 'eyJ']

/** One regex that matches wherever any detector could (a superset): most text has no secret, and one scan tells. */
export const ANY_SECRET_PATTERN = new RegExp([...SECRET_PATTERNS.map((re) => re.source.replace(/\(\?<keep>/g, '(?:')), ...SCANNED_MARKS].join('|'), 'i')
