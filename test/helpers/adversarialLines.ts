/** One mebibyte: the size of every adversarial line. */
export const LINE_BYTES = 1 << 20

/** `unit` repeated to exactly `bytes` characters (ASCII). */
export function filled(unit: string, bytes = LINE_BYTES): string {
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes)
}

/**
 * Lines built to make a backtracking secret detector take the square of their length:
 * long runs where a pattern starts at every character (`A`, hex), URL prefixes whose
 * userinfo never ends, `://` repeated, PEM BEGIN lines with no END, `-eyJ` repeated
 * without the dots of a token. `expected` is what redaction must make of each.
 */
export function adversarialLines(): Array<{ name: string; line: string; expected: string }> {
  const MARK = '[redacted secret]'
  const same = (name: string, line: string) => ({ name, line, expected: line })
  return [
    same('all A', filled('A')),
    same('hex', filled('0123456789abcdef')),
    same('https:// + long userinfo', `https://${filled('u')}`),
    same('https://u: + long password, no @', `https://u:${filled('p')}`),
    { name: 'https://u: + long password + @host', line: `https://u:${filled('p')}@host`, expected: `https://u:${MARK}@host` },
    same(':// repeated', filled('://')),
    same('a://b: repeated', filled('a://b:')),
    same('-eyJ repeated', filled('eyJ-')),
    same('PEM BEGIN lines, no END', filled('-----BEGIN PRIVATE KEY-----\n')),
    same('Bearer + spaces', `Bearer${filled(' ')}`),
    same('"password": " repeated', filled('"password": "')),
  ]
}
