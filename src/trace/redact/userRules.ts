import { type RedactionRules, Redactor } from './Redactor.js'

/** The user's redaction rules as the command line's `--redact-key`, `--redact-path` and `--redact-pattern` give them. */
export interface RedactionRuleFlags {
  redactKey?: string[] | undefined
  redactPath?: string[] | undefined
  redactPattern?: string[] | undefined
}

/** The user's rules, checked: a path or pattern that does not parse exits 2 before anything runs. */
export function redactionRules(opts: RedactionRuleFlags): RedactionRules {
  const rules: RedactionRules = {
    ...(opts.redactKey ? { keys: opts.redactKey } : {}),
    ...(opts.redactPath ? { paths: opts.redactPath } : {}),
    ...(opts.redactPattern ? { patterns: opts.redactPattern } : {}),
  }
  Redactor.checkRules(rules)
  return rules
}
