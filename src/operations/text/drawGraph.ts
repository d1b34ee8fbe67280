/** What the graph needs of an entry: its id and its parents' ids. */
export interface GraphEntry {
  id: string
  parents: readonly string[]
}

/** The commit each column waits for; null is a column no line uses (kept, so lanes never slide sideways). */
type Lanes = Array<string | null>

/**
 * The parent graph as `git log --graph` draws it, one column per open line of descent: `*`
 * marks the entry, `|` a line passing by, `\` a merge's second parent leaving, `/` a line
 * joining one that leads to the same parent. Histories that share no snapshot are drawn
 * apart: a new line never starts right under a root, a blank row (or only the lines passing by)
 * comes between. `text` is written after each entry's mark.
 */
export function drawGraph<E extends GraphEntry>(entries: readonly E[], text: (e: E) => string): string {
  let lanes: Lanes = []
  let freedByRoot = -1
  const out: string[] = []
  for (const e of entries) {
    let col = lanes.indexOf(e.id)
    if (col < 0) {
      col = firstFree(lanes)
      if (col === freedByRoot) out.push(row(lanes))
      lanes[col] = e.id
    }
    out.push(`${row(lanes, col, '*')}  ${text(e)}`)
    const [first, ...rest] = e.parents
    lanes[col] = first ?? null
    freedByRoot = first === undefined ? col : -1
    for (const p of rest) out.push(branchOff(lanes, col, p))
    out.push(...joinAll(lanes))
    lanes = trimmed(lanes)
  }
  return out.join('\n')
}

/** A merge's other parent: a new column right of the merge (the columns after it move one right: `|\ \`), or a line to the column waiting for it. */
function branchOff(lanes: Lanes, col: number, parent: string): string {
  const chars = gridOf(lanes)
  const waiting = lanes.indexOf(parent)
  if (waiting >= 0) {
    const [from, to] = waiting > col ? [2 * col + 1, 2 * waiting - 1] : [2 * waiting + 1, 2 * col - 1]
    for (let i = from; i <= to; i++) if (chars[i] === ' ') chars[i] = '-'
    return chars.join('').trimEnd()
  }
  chars[2 * col + 1] = '\\'
  if (lanes[col + 1] === undefined || lanes[col + 1] === null) lanes[col + 1] = parent
  else {
    for (let i = col + 1; i < lanes.length; i++) [chars[2 * i], chars[2 * i + 1]] = [' ', lanes[i] === null ? ' ' : '\\']
    lanes.splice(col + 1, 0, parent)
  }
  return chars.join('').trimEnd()
}

/** Where two columns wait for the same snapshot, the right one joins the left: `|/`, or `|_|/` across lines passing by. */
function joinAll(lanes: Lanes): string[] {
  const rows: string[] = []
  for (let right = 1; right < lanes.length; right++) {
    const left = lanes[right] === null ? -1 : lanes.indexOf(lanes[right]!)
    if (left < 0 || left === right) continue
    const chars = gridOf(lanes)
    chars[2 * right] = ' '
    chars[2 * right - 1] = '/'
    for (let i = 2 * left + 1; i < 2 * right - 1; i++) if (chars[i] === ' ') chars[i] = '_'
    lanes[right] = null
    rows.push(chars.join('').trimEnd())
  }
  return rows
}

/** Each column as two characters: its line (or a space), then the gap. */
function gridOf(lanes: Lanes, mark = -1, markChar = '*'): string[] {
  return lanes.flatMap((lane, i) => [i === mark ? markChar : lane === null ? ' ' : '|', ' '])
}

function row(lanes: Lanes, mark = -1, markChar = '*'): string {
  return gridOf(lanes, mark, markChar).join('').trimEnd()
}

function firstFree(lanes: Lanes): number {
  const free = lanes.indexOf(null)
  return free < 0 ? lanes.length : free
}

function trimmed(lanes: Lanes): Lanes {
  let end = lanes.length
  while (end > 0 && lanes[end - 1] === null) end--
  return lanes.slice(0, end)
}
