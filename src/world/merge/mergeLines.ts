import { type LineHunk, diffLines } from '../diff/diffLines.js'

/** The names written after the conflict markers, as git writes its `-L` labels. */
export interface ConflictLabels {
  ours: string
  base: string
  theirs: string
}

export type LineMerge = { clean: true; bytes: Buffer } | { clean: false; bytes: Buffer; conflicts: number }

/** A stretch of the base that one side changed, both changed alike, or both changed differently. */
type Region = { from: 'ours' | 'theirs' | 'same' | 'conflict'; baseStart: number; baseEnd: number; ours: LineHunk[]; theirs: LineHunk[] }

const DEFAULT_LABELS: ConflictLabels = { ours: 'ours', base: 'base', theirs: 'theirs' }

/**
 * Three-way merge of text, line by line, as `git merge-file --diff3` does it: changes of
 * one side that neither overlap nor touch a change of the other are taken; the same change
 * on both sides is taken once; anything else is a conflict, written with git's diff3
 * markers (ours, `|||||||` base, `=======`, theirs). Bytes in, bytes out: lines are compared
 * as bytes with their line ends, so any encoding and CRLF files merge as they are.
 */
export function mergeLines({ base, ours, theirs, labels = DEFAULT_LABELS }: { base: Buffer; ours: Buffer; theirs: Buffer; labels?: ConflictLabels }): LineMerge {
  const [baseLines, ourLines, theirLines] = [base, ours, theirs].map(splitLines) as [string[], string[], string[]]
  const regions = regionsOf(diffLines(baseLines, ourLines), diffLines(baseLines, theirLines), (o, t) =>
    sameLines(ourLines.slice(o.sideStart, o.sideStart + o.sideCount), theirLines.slice(t.sideStart, t.sideStart + t.sideCount)),
  )
  const eol = usesCrlf(ourLines) ? '\r\n' : '\n'
  const out: string[] = []
  let conflicts = 0
  let position = 0
  for (const region of regions) {
    out.push(...baseLines.slice(position, region.baseStart))
    const mine = sideLines(ourLines, region.ours, region.baseStart, region.baseEnd)
    const yours = sideLines(theirLines, region.theirs, region.baseStart, region.baseEnd)
    if (region.from === 'ours' || region.from === 'same') out.push(...mine)
    else if (region.from === 'theirs') out.push(...yours)
    else {
      conflicts++
      const original = baseLines.slice(region.baseStart, region.baseEnd)
      const marker = (sign: string, label?: string) => `${sign.repeat(7)}${label === undefined ? '' : ` ${utf8AsBinary(label)}`}${eol}`
      out.push(marker('<', labels.ours), ...terminated(mine, eol), marker('|', labels.base), ...terminated(original, eol))
      out.push(marker('='), ...terminated(yours, eol), marker('>', labels.theirs))
    }
    position = region.baseEnd
  }
  out.push(...baseLines.slice(position))
  const bytes = Buffer.from(out.join(''), 'latin1')
  return conflicts === 0 ? { clean: true, bytes } : { clean: false, bytes, conflicts }
}

/**
 * Pair up both sides' hunks into regions of the base, as xdiff's merge does: a hunk that
 * ends before the other side's next one starts is one side's alone; hunks that overlap or
 * touch make one region, `same` when they are the same change, and a region that touches
 * the previous one joins it (a conflict when they differ in kind).
 */
function regionsOf(ours: LineHunk[], theirs: LineHunk[], sameText: (o: LineHunk, t: LineHunk) => boolean): Region[] {
  const regions: Region[] = []
  const add = (next: Region) => {
    const last = regions.at(-1)
    if (!last || next.baseStart > last.baseEnd) return void regions.push(next)
    if (last.from !== next.from) last.from = 'conflict'
    last.baseEnd = Math.max(last.baseEnd, next.baseEnd)
    last.ours.push(...next.ours)
    last.theirs.push(...next.theirs)
  }
  const end = (h: LineHunk) => h.baseStart + h.baseCount
  let i = 0
  let j = 0
  while (i < ours.length || j < theirs.length) {
    const o = ours[i]
    const t = theirs[j]
    if (o && (!t || end(o) < t.baseStart)) {
      add({ from: 'ours', baseStart: o.baseStart, baseEnd: end(o), ours: [o], theirs: [] })
      i++
    } else if (t && (!o || end(t) < o.baseStart)) {
      add({ from: 'theirs', baseStart: t.baseStart, baseEnd: end(t), ours: [], theirs: [t] })
      j++
    } else if (o && t) {
      const same = o.baseStart === t.baseStart && o.baseCount === t.baseCount && o.sideCount === t.sideCount && sameText(o, t)
      add({ from: same ? 'same' : 'conflict', baseStart: Math.min(o.baseStart, t.baseStart), baseEnd: Math.max(end(o), end(t)), ours: [o], theirs: [t] })
      i++
      j++
    }
  }
  return regions
}

/** A side's lines for the base stretch [baseStart, baseEnd), given that side's hunks inside it. */
function sideLines(lines: string[], hunks: LineHunk[], baseStart: number, baseEnd: number): string[] {
  const first = hunks[0]
  const last = hunks.at(-1)
  if (!first || !last) return lines.slice(baseStart, baseEnd) // unreachable: a side in a region has a hunk there
  const start = first.sideStart - (first.baseStart - baseStart)
  const end = last.sideStart + last.sideCount + (baseEnd - (last.baseStart + last.baseCount))
  return lines.slice(start, end)
}

/** Lines with their line ends, as one-byte-per-character strings so that comparing them compares bytes. */
function splitLines(bytes: Buffer): string[] {
  const text = bytes.toString('latin1')
  const lines: string[] = []
  let start = 0
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
    lines.push(text.slice(start, nl + 1))
    start = nl + 1
  }
  if (start < text.length) lines.push(text.slice(start))
  return lines
}

const sameLines = (a: string[], b: string[]): boolean => a.length === b.length && a.every((line, i) => line === b[i])

/** A section before a marker must end its last line, or the marker would join it. */
function terminated(lines: string[], eol: string): string[] {
  const last = lines.at(-1)
  return last === undefined || last.endsWith('\n') ? lines : [...lines.slice(0, -1), last + eol]
}

const usesCrlf = (lines: string[]): boolean => lines.length > 0 && lines.every((line, i) => line.endsWith('\r\n') || (i === lines.length - 1 && !line.endsWith('\n')))

const utf8AsBinary = (text: string): string => Buffer.from(text, 'utf8').toString('latin1')
