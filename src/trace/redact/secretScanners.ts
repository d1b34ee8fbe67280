import type { Span } from './LiteralSet.js'

const PEM_BEGIN = /-----BEGIN [A-Z ]*PRIVATE KEY-----/g
const PEM_END = /-----END [A-Z ]*PRIVATE KEY-----/g

/**
 * PEM private key blocks, from a BEGIN line to the first END line after it. A single
 * regex (`BEGIN…[\s\S]*?…END`) searches the rest of the text once per BEGIN when no END
 * follows; here the search for BEGIN lines and the search for END lines each move
 * forward only, and the first BEGIN without an END ends the search.
 */
export function collectPrivateKeys(text: string, spans: Span[]): void {
  PEM_BEGIN.lastIndex = 0
  for (let begin = PEM_BEGIN.exec(text); begin; begin = PEM_BEGIN.exec(text)) {
    PEM_END.lastIndex = PEM_BEGIN.lastIndex
    if (!PEM_END.exec(text)) return
    spans.push([begin.index, PEM_END.lastIndex])
    PEM_BEGIN.lastIndex = PEM_END.lastIndex
  }
}

const TOKEN_RUN = /[A-Za-z0-9_.-]+/g
const JWT_START = /(?<![A-Za-z0-9_])eyJ/
const MIN_JWT_PART = 8

/**
 * JSON Web Tokens: three dot-separated parts of base64url, the first starting `eyJ` at a
 * word boundary (as `\beyJ[…]{8,}\.[…]{8,}\.[…]{8,}` would match, whose retries from
 * every `-eyJ` of a long word cost the square of its length). Each run of token
 * characters is split at its dots once; a token runs from the first `eyJ` of a part to
 * the end of the part two dots on.
 */
export function collectJsonWebTokens(text: string, spans: Span[]): void {
  if (!text.includes('eyJ')) return
  TOKEN_RUN.lastIndex = 0
  for (let run = TOKEN_RUN.exec(text); run; run = TOKEN_RUN.exec(text)) {
    if (run[0].includes('eyJ')) collectInRun(run[0].split('.'), run.index, spans)
  }
}

function collectInRun(parts: string[], offset: number, spans: Span[]): void {
  const starts: number[] = []
  for (let i = 0, at = offset; i < parts.length; at += parts[i]!.length + 1, i++) starts.push(at)
  for (let i = 0; i + 2 < parts.length;) {
    const begin = parts[i]!.search(JWT_START)
    const isToken = begin >= 0 && parts[i]!.length - begin - 3 >= MIN_JWT_PART && parts[i + 1]!.length >= MIN_JWT_PART && parts[i + 2]!.length >= MIN_JWT_PART
    if (!isToken) {
      i++
      continue
    }
    spans.push([starts[i]! + begin, starts[i + 2]! + parts[i + 2]!.length])
    i += 3
  }
}
