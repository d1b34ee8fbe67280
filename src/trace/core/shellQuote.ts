/** A command line as a POSIX shell would take it back: each argument single-quoted unless it is plainly safe. */
export function shellQuote(argv: string[]): string {
  return argv.map((arg) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ')
}
