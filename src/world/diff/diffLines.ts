/** A run of changed lines: `baseCount` lines of the base at `baseStart` became `sideCount` lines of the side at `sideStart`. */
export interface LineHunk {
  baseStart: number
  baseCount: number
  sideStart: number
  sideCount: number
}

/**
 * Past this many edits a diff stops searching for the shortest script and calls the whole
 * middle (after the common prefix and suffix) changed: the search keeps one row per edit,
 * so its memory grows with the square of the edits.
 */
export const MAX_EDITS = 4000

/**
 * The lines that changed from `base` to `side`, as hunks in order. The shortest edit script
 * (Myers), after trimming the common ends, with each run of changes slid as git's xdiff
 * slides it: as far down as equal lines allow, unless a position lines it up with a change
 * on the other side. That canonical form is what makes a three-way merge built on it agree
 * with `git merge-file` wherever the merge is clean.
 */
export function diffLines(base: readonly string[], side: readonly string[]): LineHunk[] {
  const [changedBase, changedSide] = changedLines(base, side)
  compact(base, changedBase, changedSide)
  compact(side, changedSide, changedBase)
  return hunksOf(changedBase, changedSide)
}

function changedLines(a: readonly string[], b: readonly string[]): [Uint8Array, Uint8Array] {
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  const changedA = new Uint8Array(a.length)
  const changedB = new Uint8Array(b.length)
  const middleA = a.slice(head, a.length - tail)
  const middleB = b.slice(head, b.length - tail)
  const script = shortestEdits(middleA, middleB)
  if (script) {
    changedA.set(script[0], head)
    changedB.set(script[1], head)
  } else {
    changedA.fill(1, head, a.length - tail)
    changedB.fill(1, head, b.length - tail)
  }
  return [changedA, changedB]
}

/** Myers' greedy O(ND) search, keeping each edit's row of furthest reaches to walk back; null past MAX_EDITS. */
function shortestEdits(a: readonly string[], b: readonly string[]): [Uint8Array, Uint8Array] | null {
  const n = a.length
  const m = b.length
  const offset = n + m + 1
  const reach = new Int32Array(2 * offset + 1)
  const rows: Int32Array[] = []
  const fromBelow = (k: number, d: number, row: Int32Array) => k === -d || (k !== d && row[offset + k - 1]! < row[offset + k + 1]!)
  search: for (let d = 0; d <= n + m; d++) {
    if (d > MAX_EDITS) return null
    rows.push(reach.slice(offset - d, offset + d + 1))
    for (let k = -d; k <= d; k += 2) {
      let x = fromBelow(k, d, reach) ? reach[offset + k + 1]! : reach[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      reach[offset + k] = x
      if (x >= n && y >= m) break search
    }
  }
  const changedA = new Uint8Array(n)
  const changedB = new Uint8Array(m)
  let x = n
  let y = m
  for (let d = rows.length - 1; d > 0; d--) {
    const saved = rows[d]!
    const row = (k: number) => saved[k + d]!
    const k = x - y
    const down = k === -d || (k !== d && row(k - 1) < row(k + 1))
    const previousK = down ? k + 1 : k - 1
    const previousX = row(previousK)
    const previousY = previousX - previousK
    while (x > previousX && y > previousY) {
      x--
      y--
    }
    if (down) changedB[--y] = 1
    else changedA[--x] = 1
  }
  return [changedA, changedB]
}

/** A group: the changed lines between two unchanged ones, possibly none. */
interface Group {
  start: number
  end: number
}

/** Changed-flags with the ends of the file reading as unchanged. */
const isChanged = (flags: Uint8Array, i: number): boolean => i >= 0 && i < flags.length && flags[i] === 1

function firstGroup(flags: Uint8Array): Group {
  const g = { start: 0, end: 0 }
  while (isChanged(flags, g.end)) g.end++
  return g
}

function nextGroup(flags: Uint8Array, g: Group): boolean {
  if (g.end >= flags.length) return false
  g.start = g.end + 1
  g.end = g.start
  while (isChanged(flags, g.end)) g.end++
  return true
}

function previousGroup(flags: Uint8Array, g: Group): boolean {
  if (g.start <= 0) return false
  g.end = g.start - 1
  g.start = g.end
  while (isChanged(flags, g.start - 1)) g.start--
  return true
}

/**
 * Slide every group of changed lines of one side (`lines`, `flags`) as xdiff does: up as far
 * as it goes (merging with groups it meets), then down as far as it goes, and finally up
 * again to the lowest position where it ends next to a change on the other side, if it
 * passed one. The other side's groups are walked in step, so `other` stays in sync.
 */
function compact(lines: readonly string[], flags: Uint8Array, other: Uint8Array): void {
  const g = firstGroup(flags)
  const o = firstGroup(other)
  const slideDown = () => {
    if (g.end >= lines.length || lines[g.start] !== lines[g.end]) return false
    flags[g.start++] = 0
    flags[g.end++] = 1
    while (isChanged(flags, g.end)) g.end++
    return true
  }
  const slideUp = () => {
    if (g.start <= 0 || lines[g.start - 1] !== lines[g.end - 1]) return false
    flags[--g.start] = 1
    flags[--g.end] = 0
    while (isChanged(flags, g.start - 1)) g.start--
    return true
  }
  for (;;) {
    if (g.end !== g.start) {
      let size: number
      let endNextToOther: number
      let earliestEnd: number
      do {
        size = g.end - g.start
        endNextToOther = -1
        while (slideUp()) previousGroup(other, o)
        earliestEnd = g.end
        if (o.end > o.start) endNextToOther = g.end
        while (slideDown()) {
          nextGroup(other, o)
          if (o.end > o.start) endNextToOther = g.end
        }
      } while (size !== g.end - g.start)
      if (g.end !== earliestEnd && endNextToOther !== -1) {
        while (o.end === o.start && slideUp()) previousGroup(other, o)
      }
    }
    if (!nextGroup(flags, g) || !nextGroup(other, o)) return
  }
}

function hunksOf(changedBase: Uint8Array, changedSide: Uint8Array): LineHunk[] {
  const hunks: LineHunk[] = []
  let i = 0
  let j = 0
  while (i < changedBase.length || j < changedSide.length) {
    if (i < changedBase.length && j < changedSide.length && !changedBase[i] && !changedSide[j]) {
      i++
      j++
      continue
    }
    const baseStart = i
    const sideStart = j
    while (changedBase[i]) i++
    while (changedSide[j]) j++
    hunks.push({ baseStart, baseCount: i - baseStart, sideStart, sideCount: j - sideStart })
  }
  return hunks
}
