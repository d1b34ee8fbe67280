/** The variables a sandboxed command gets from the caller's environment by default. */
export const ENV_ALLOWLIST = ['PATH', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'LC_*'] as const

/** The sandbox's private, writable home directory (a tmpfs of its own). */
export const SANDBOX_HOME = '/home/sandbox'

const allowed = (name: string): boolean => ENV_ALLOWLIST.some((a) => (a.endsWith('*') ? name.startsWith(a.slice(0, -1)) : name === a))

/**
 * A sandboxed command's default environment: the allowlisted variables of `from` (never
 * API keys or tokens), the names in `pass` too, HOME the sandbox's own home.
 */
export function sandboxEnv(from: NodeJS.ProcessEnv, pass: string[] = []): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(from)) if (value !== undefined && (allowed(name) || pass.includes(name))) env[name] = value
  env['PATH'] ??= '/usr/local/bin:/usr/bin:/bin'
  env['HOME'] = SANDBOX_HOME
  return env
}

/** `NAME=VALUE` lines of an env file (`#` comments and blank lines skipped, an optional `export `, quotes around the value removed). */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/^export\s+/, '')
    if (line === '' || line.startsWith('#')) continue
    const eq = line.indexOf('=')
    if (eq <= 0) continue
    const value = line.slice(eq + 1).trim()
    env[line.slice(0, eq).trim()] = /^(['"]).*\1$/.test(value) ? value.slice(1, -1) : value
  }
  return env
}
