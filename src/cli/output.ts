import pc from 'picocolors'

export interface OutputFlags {
  json?: boolean
}

/**
 * Print a command's result: one JSON document (with schemaVersion) under --json, the
 * human rendering otherwise. Returns the result so command functions stay testable.
 */
export function emit<T>(flags: OutputFlags, result: T, human: (r: T) => string): T {
  if (flags.json) process.stdout.write(`${JSON.stringify({ schemaVersion: 1, ...(result as object) }, null, 2)}\n`)
  else {
    const text = human(result)
    if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
  }
  return result
}

/** Progress and notes go to stderr, so stdout always parses. */
export function note(message: string): void {
  process.stderr.write(`${pc.dim(message)}\n`)
}

export { pc }
