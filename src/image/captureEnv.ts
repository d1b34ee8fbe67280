import { ANY_SECRET_PATTERN, SECRET_MARK, SENSITIVE_ENV_NAME } from '../trace/redact/secretPatterns.js'

export interface EnvChoice {
  /** Names recorded as they are, even when they look secret. */
  keep?: string[]
  /** Names scrubbed even when they do not look secret. */
  scrub?: string[]
}

/**
 * The environment as the image's `world.env`: every variable, with the value of each
 * secret-looking one replaced by the trace layer's secret mark. Secret-looking = a name
 * the trace layer treats as holding a secret (TOKEN, KEY, PASSWORD, …) or a value one of
 * its secret detectors matches. The name stays, so whoever resumes the image knows to supply it.
 */
export function captureEnv(env: NodeJS.ProcessEnv, { keep = [], scrub = [] }: EnvChoice = {}): Record<string, string> {
  const kept = new Set(keep)
  const scrubbed = new Set(scrub)
  const out: Record<string, string> = {}
  for (const name of Object.keys(env).sort()) {
    const value = env[name]
    if (value === undefined) continue
    const secret = scrubbed.has(name) || (!kept.has(name) && looksSecret(name, value))
    out[name] = secret ? SECRET_MARK : value
  }
  return out
}

function looksSecret(name: string, value: string): boolean {
  return SENSITIVE_ENV_NAME.test(name) || ANY_SECRET_PATTERN.test(value)
}
