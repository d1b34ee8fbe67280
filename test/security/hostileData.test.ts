import { describe, expect, it } from 'vitest'
import { transcriptText, transcriptToRun } from '../../src/trace/core/transcript.js'
import { Redactor } from '../../src/trace/redact/Redactor.js'
import { adversarialLines, filled, LINE_BYTES } from '../helpers/adversarialLines.js'

describe('hostile trace data: linear redaction, rules from artifacts, bounded messages, exit 5 and 2 not 6', () => {
  const MARK = '[redacted secret]'

  describe('redaction takes time linear in the text', () => {
    for (const { name, line, expected } of adversarialLines()) {
      it(`redacts a 1 MiB line exactly: ${name}`, () => {
        expect(line.length).toBeGreaterThanOrEqual(LINE_BYTES)
        expect(new Redactor({ env: {} }).redactText(line) === expected).toBe(true)
      })
    }

    it('finds a learned value that almost matches everywhere (AAAA…B over 1 MiB of A) only where it is', () => {
      const secret = `${'A'.repeat(1000)}B`
      const redactor = new Redactor({ env: { SERVICE_TOKEN: secret } })
      const line = filled('A')
      expect(redactor.redactText(line) === line).toBe(true)
      expect(redactor.redactText(`${line}${secret}!`) === `${line}${MARK}!`).toBe(true)
    })

    it('a transcript whose one line is 1 MiB of A comes back byte for byte', () => {
      const text = `${JSON.stringify({ role: 'user', content: filled('A') })}\n`
      expect(transcriptText(transcriptToRun(Buffer.from(text), 'big.jsonl', { env: {} })) === text).toBe(true)
    })
  })
})
