/**
 * How an operation's result reads on the command line. The result itself is the
 * operation's data (what `--json` prints, with `schemaVersion`); a rendering adds the human
 * text and what the result means for the exit code.
 */
export interface Rendering<T, Args = object> {
  /** stdout without --json ('' prints nothing) */
  human(result: T, args: Args): string
  /** stderr lines without --json: summaries that are not the command's data */
  notes?(result: T): string[]
  /** stderr lines in both modes: what the user must hear even when a program reads stdout */
  warnings?(result: T, args: Args): string[]
  /** a non-zero exit code (a difference, a conflict, the child's code), or an error to fail with once the result is printed */
  exit?(result: T): number | Error
}

/** Where the command line writes bytes as they come: stdout, and whether it is a terminal. */
export interface ByteSink {
  terminal: boolean
  write(chunk: string | Uint8Array): Promise<void>
}
