import fc from 'fast-check'
import { applyByteOp, byteOp } from './byteMutations.js'

/** Pieces of the secrets the redactor looks for, and of the texts that made its patterns backtrack. */
const FRAGMENTS = [
  'https://',
  'http://user:',
  'user:pass@',
  '@',
  ':',
  '//',
  'AKIA',
  'sk-',
  'sk-ant-',
  'ghp_',
  'xoxb-',
  'eyJ',
  '-----BEGIN PRIVATE KEY-----',
  'Bearer ',
  'password=',
  'token:',
  '=',
  '"',
  ' ',
  '\n',
  'A',
  '0f',
  '+/',
]

const textOp = fc.oneof(
  { weight: 3, arbitrary: byteOp.map((op) => (text: Buffer) => applyByteOp(text, op)) },
  {
    weight: 2,
    arbitrary: fc
      .record({ at: fc.nat(), fragment: fc.constantFrom(...FRAGMENTS), times: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.constantFrom(1000, 20_000, 70_000)) })
      .map(({ at, fragment, times }) => (text: Buffer) => {
        const place = at % (text.length + 1)
        return Buffer.concat([text.subarray(0, place), Buffer.from(fragment.repeat(times)), text.subarray(place)])
      }),
  },
)

/** A text seed with one to six edits: byte mutations and secret-like fragments inserted, some repeated thousands of times. */
export function mutatedText(seeds: Buffer[]): fc.Arbitrary<Buffer> {
  return fc
    .record({ seed: fc.integer({ min: 0, max: seeds.length - 1 }), ops: fc.array(textOp, { minLength: 1, maxLength: 6 }) })
    .map(({ seed, ops }) => ops.reduce((text, op) => op(text), seeds[seed]!))
}
