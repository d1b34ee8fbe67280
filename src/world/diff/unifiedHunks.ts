import { type LineHunk, diffLines } from './diffLines.js'

/** Lines of context around each change, as git shows by default. */
export const CONTEXT_LINES = 3

/**
 * The hunks of a unified diff from `before` to `after`, as `git diff` writes them: changes
 * closer than twice the context share a hunk, each header carries the nearest line above
 * it that starts with a letter, `_` or `$` (git's default function line, cut to 80 bytes),
 * and a last line without a newline is marked `\ No newline at end of file`. The texts are
 * byte strings (latin1, one character per byte), so the result is too; '' when they are equal.
 */
export function unifiedHunks(before: string, after: string, context = CONTEXT_LINES): string {
  const a = splitLines(before)
  const b = splitLines(after)
  const out: string[] = []
  const func = { line: '', searchedTo: -1 }
  for (const group of hunkGroups(diffLines(a, b), context)) {
    const first = group[0]!
    const last = group[group.length - 1]!
    const start = Math.max(first.baseStart - context, 0)
    const end = Math.min(last.baseStart + last.baseCount + context, a.length)
    const sideStart = first.sideStart - (first.baseStart - start)
    const sideEnd = last.sideStart + last.sideCount + (end - last.baseStart - last.baseCount)
    out.push(`@@ -${range(start, end - start)} +${range(sideStart, sideEnd - sideStart)} @@${functionLine(a, start, func)}\n`)
    let at = start
    for (const h of group) {
      for (; at < h.baseStart; at++) out.push(line(' ', a[at]!))
      for (let i = 0; i < h.baseCount; i++) out.push(line('-', a[h.baseStart + i]!))
      for (let i = 0; i < h.sideCount; i++) out.push(line('+', b[h.sideStart + i]!))
      at = h.baseStart + h.baseCount
    }
    for (; at < end; at++) out.push(line(' ', a[at]!))
  }
  return out.join('')
}

/** Lines with their newlines kept, so a last line without one differs from the same line with it. */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? []
}

function hunkGroups(hunks: LineHunk[], context: number): LineHunk[][] {
  const groups: LineHunk[][] = []
  for (const h of hunks) {
    const group = groups[groups.length - 1]
    const previous = group?.[group.length - 1]
    if (previous && h.baseStart - (previous.baseStart + previous.baseCount) <= 2 * context) group.push(h)
    else groups.push([h])
  }
  return groups
}

/** `start,count` with a 1-based start; an empty range names the line before it, a count of 1 is left out. */
function range(start: number, count: number): string {
  if (count === 0) return `${start},0`
  return count === 1 ? `${start + 1}` : `${start + 1},${count}`
}

function line(mark: string, text: string): string {
  return text.endsWith('\n') ? `${mark}${text}` : `${mark}${text}\n\\ No newline at end of file\n`
}

/** The last function line above `start`, searching only where the previous hunk did not (as xdiff does). */
function functionLine(a: readonly string[], start: number, found: { line: string; searchedTo: number }): string {
  for (let i = start - 1; i > found.searchedTo; i--) {
    if (/^[A-Za-z_$]/.test(a[i]!)) {
      found.line = a[i]!.slice(0, 80).replace(/[ \t\n\v\f\r]+$/, '')
      break
    }
  }
  found.searchedTo = start - 1
  return found.line ? ` ${found.line}` : ''
}
