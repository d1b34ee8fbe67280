import pc from 'picocolors'

export interface OutputFlags {
  json?: boolean
}

/**
 * How a command's result is shown. The result itself is the command's data (what `--json`
 * prints, with `schemaVersion`); a view adds the human rendering and what the result means
 * for the exit code.
 */
export interface View<T> {
  /** stdout without --json ('' prints nothing) */
  human(result: T): string
  /** stderr lines without --json: summaries that are not the command's data */
  notes?(result: T): string[]
  /** stderr lines in both modes: what the user must hear even when a program reads stdout */
  warnings?(result: T): string[]
  /** a non-zero exit code (a difference, a conflict, the child's code), or an error to fail with once the result is printed */
  exit?(result: T): number | Error
}

/**
 * The one formatter: a command's result as one JSON document on stdout under --json (its
 * fields with `schemaVersion: 1`), its human rendering otherwise; notes and warnings on
 * stderr; the exit code the view gives. An error the view gives is thrown after printing,
 * for `program.ts` to report as any other.
 */
export function print<T extends object>(flags: OutputFlags, result: T, view: View<T>): void {
  for (const line of view.warnings?.(result) ?? []) process.stderr.write(`${line}\n`)
  if (!flags.json) for (const line of view.notes?.(result) ?? []) process.stderr.write(`${pc.dim(line)}\n`)
  if (flags.json) process.stdout.write(`${JSON.stringify({ schemaVersion: 1, ...result }, null, 2)}\n`)
  else {
    const text = view.human(result)
    if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
  }
  const exit = view.exit?.(result) ?? 0
  if (exit instanceof Error) throw exit
  process.exitCode = exit
}

export { pc }
