import { pc } from '../operations/text/colors.js'
import type { Rendering } from '../operations/rendering.js'

export interface OutputFlags {
  json?: boolean
}

/**
 * The one formatter: a command's result as one JSON document on stdout under --json (its
 * fields with `schemaVersion: 1`), its human rendering otherwise; notes and warnings on
 * stderr; the exit code the rendering gives. An error the rendering gives is thrown after printing,
 * for `program.ts` to report as any other.
 */
export function print<T extends object, Args extends object = object>(flags: OutputFlags, result: T, view: Rendering<T, Args>, args = {} as Args): void {
  for (const line of view.warnings?.(result, args) ?? []) process.stderr.write(`${line}\n`)
  if (!flags.json) for (const line of view.notes?.(result) ?? []) process.stderr.write(`${pc.dim(line)}\n`)
  if (flags.json) process.stdout.write(`${JSON.stringify({ schemaVersion: 1, ...result }, null, 2)}\n`)
  else {
    const text = view.human(result, args)
    if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
  }
  const exit = view.exit?.(result) ?? 0
  if (exit instanceof Error) throw exit
  process.exitCode = exit
}

export { pc }
