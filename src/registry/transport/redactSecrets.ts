/** What an error may echo of a remote's answer, after redaction. */
export const MAX_ECHOED_CHARS = 200

const USERINFO_RE = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi
const AUTH_SCHEME_RE = /\b(Basic|Bearer|Token)(\s+)[A-Za-z0-9._~+/=-]+/gi
const SECRET_FIELD_RE = /("?(?:password|passwd|secret|token|access_token|refresh_token|authorization|auth)"?\s*[:=]\s*)("[^"]*"|[^\s,;}&]+)/gi

/**
 * Text from or about a remote (a response body, a URL, a network error) made safe to
 * print: userinfo stripped from URLs, Basic/Bearer material and password/token fields
 * replaced, and every known secret (passwords, tokens, their base64 forms) removed
 * wherever it appears.
 */
export function redactSecrets(text: string, secrets: Iterable<string> = []): string {
  let out = text
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]')
  return out.replace(USERINFO_RE, '$1').replace(AUTH_SCHEME_RE, '$1$2[redacted]').replace(SECRET_FIELD_RE, '$1[redacted]')
}

/** A remote's answer for an error message: redacted, on one line, at most MAX_ECHOED_CHARS. */
export function echoBody(text: string, secrets: Iterable<string> = []): string {
  const line = redactSecrets(text, secrets).replace(/\s+/g, ' ').trim()
  return line.length > MAX_ECHOED_CHARS ? `${line.slice(0, MAX_ECHOED_CHARS)}…` : line
}
