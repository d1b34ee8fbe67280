import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from './helpers/cli.js'

// Docs state current facts; their history lives in git log and bench/results/.
const files = [
  'README.md',
  'CHANGELOG.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** The prose of a Markdown file: fenced blocks and inline code (examples of input, such as a date a flag takes) left out. */
function prose(text: string): string {
  return text.replaceAll(/^```[\s\S]*?^```$/gm, '').replaceAll(/`[^`\n]*`/g, '')
}

/** Work-log references in prose: issue numbers, calendar dates, times of day. */
function workLogReferences(text: string): string[] {
  const patterns = [
    /\bissues?\s+#?\d+(?:\s*(?:,|and)\s*#?\d+)*/gi,
    /(?<![\w/])#\d+\b/g,
    /\b(?:the|this|a later|later|earlier)\s+issues?\b|\bissue's/gi,
    /\b\d{4}-\d{2}-\d{2}\b/g,
    /\b\d{1,2}:\d{2}(?::\d{2})?\s*UTC\b/g,
  ]
  return patterns.flatMap((pattern) => [...prose(text).matchAll(pattern)].map((m) => m[0]))
}

describe('docs', () => {
  it('finds the work-log references it is meant to refuse, and not a date given as an example of input', () => {
    expect(workLogReferences('Part of issue 16 (issues 19 and 21), see #21, as the issue asks; at 2026-11-28, 15:20 UTC.')).toEqual([
      'issue 16',
      'issues 19 and 21',
      '#21',
      'the issue',
      '2026-11-28',
      '15:20 UTC',
    ])
    expect(workLogReferences('`--prune 2026-01-31` takes a date; `refs/forks/<id>/<i>`, [a](#security)')).toEqual([])
  })

  for (const file of files) {
    it(`${file} names no issue numbers, dates or times of day`, () => {
      expect(workLogReferences(readFileSync(join(ROOT, file), 'utf8'))).toEqual([])
    })
  }

  it('README.md has no line over 120 characters', () => {
    const long = readFileSync(join(ROOT, 'README.md'), 'utf8')
      .split('\n')
      .map((line, i) => ({ line: i + 1, length: line.length }))
      .filter((l) => l.length > 120)
    expect(long).toEqual([])
  })
})
