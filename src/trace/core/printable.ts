/** Characters a terminal acts on instead of showing: C0 and C1 controls, DEL, line and paragraph separators, bidi overrides. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/**
 * Text from a run (step names, ids, commands: whatever its author wrote) made safe to
 * print: every control character shown as an escape (`\x1b`, `\n`, `\u202e`), so an
 * artifact cannot move the cursor, recolour or rewrite the terminal it is shown on.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0)
    if (c === '\n') return '\\n'
    if (c === '\r') return '\\r'
    if (c === '\t') return '\\t'
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}
