/**
 * `npm run bench -- redaction`: milliseconds to redact one 1 MiB line (so ms/MiB), each
 * adversarial line of test/helpers/adversarialLines.ts against a plain line of prose of
 * the same size (median of interleaved runs). Linear redaction keeps every row within a
 * small factor of the plain line; a backtracking pattern took minutes.
 */
import { compare, report, type Row } from './harness.js'
import { Redactor } from '../src/trace/redact/Redactor.js'
import { adversarialLines, filled } from '../test/helpers/adversarialLines.js'

export async function main(): Promise<void> {
  // learned values as a session has them: one long near-match of the `A` line among them
  const redactor = new Redactor({ env: { SERVICE_TOKEN: `${'A'.repeat(1000)}B`, DB_PASSWORD: 'hunter2hunter2' } })
  const plain = filled('the quick brown fox jumps over the lazy dog, 0123456789. ')
  const rows: Row[] = []
  for (const { name, line } of adversarialLines()) {
    const { a, b, ratio } = await compare({ run: () => redactor.redactText(line) }, { run: () => redactor.redactText(plain) }, { runs: 5, warmup: 1 })
    rows.push({ line: name, 'adversarial ms/MiB': a, 'plain ms/MiB': b, ratio })
  }
  report('redaction', 'Redaction of 1 MiB lines: adversarial against plain text of the same size', rows)
}
