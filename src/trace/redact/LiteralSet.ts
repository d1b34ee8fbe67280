/** A `[start, end)` range of a text. */
export type Span = [number, number]

/**
 * Strings to find anywhere in a text, in time linear in the text whatever the strings
 * are: a regex alternation of literals costs up to (text × longest string) when one
 * string keeps almost matching (`AAAA…B` over `AAAA…`). Strings are held in Aho–Corasick
 * automata of 1, 2, 4, … strings (a binary counter): adding one rebuilds only the small
 * ones, so learning k strings costs their length × log k, and a search runs log k
 * automata over the text.
 */
export class LiteralSet {
  private readonly levels: Array<Automaton | null> = []
  private readonly members = new Set<string>()

  get size(): number {
    return this.members.size
  }

  has(value: string): boolean {
    return this.members.has(value)
  }

  add(value: string): void {
    if (value === '' || this.members.has(value)) return
    this.members.add(value)
    let words = [value]
    let level = 0
    for (; this.levels[level]; level++) {
      words = words.concat(this.levels[level]!.words)
      this.levels[level] = null
    }
    this.levels[level] = new Automaton(words)
  }

  /** Every occurrence of a member in `text`, as spans (overlapping and touching occurrences merged). */
  collect(text: string, spans: Span[]): void {
    for (const automaton of this.levels) automaton?.collect(text, spans)
  }
}

/** Aho–Corasick over UTF-16 code units; transitions in one Map keyed by state and code unit. */
class Automaton {
  private readonly next = new Map<number, number>()
  private readonly fail: number[] = [0]
  /** Length of the longest member that ends at this state (0: none). */
  private readonly longest: number[] = [0]

  constructor(readonly words: string[]) {
    for (const word of words) this.insert(word)
    this.link()
  }

  collect(text: string, spans: Span[]): void {
    const first = spans.length
    let state = 0
    for (let i = 0; i < text.length; i++) {
      state = this.step(state, text.charCodeAt(i))
      const length = this.longest[state]!
      if (length > 0) pushMerged(spans, first, [i + 1 - length, i + 1])
    }
  }

  private step(from: number, code: number): number {
    let state = from
    for (;;) {
      const to = this.next.get(state * 0x10000 + code)
      if (to !== undefined) return to
      if (state === 0) return 0
      state = this.fail[state]!
    }
  }

  private insert(word: string): void {
    let state = 0
    for (let i = 0; i < word.length; i++) {
      const key = state * 0x10000 + word.charCodeAt(i)
      let to = this.next.get(key)
      if (to === undefined) {
        to = this.fail.length
        this.fail.push(0)
        this.longest.push(0)
        this.next.set(key, to)
      }
      state = to
    }
    this.longest[state] = word.length
  }

  /** Failure links breadth first: a state's parent is always linked before it. */
  private link(): void {
    const children = new Map<number, Array<[number, number]>>()
    for (const [key, to] of this.next) {
      const parent = Math.floor(key / 0x10000)
      const list = children.get(parent) ?? []
      list.push([key % 0x10000, to])
      children.set(parent, list)
    }
    const queue = [0]
    for (let head = 0; head < queue.length; head++) {
      const parent = queue[head]!
      for (const [code, child] of children.get(parent) ?? []) {
        this.fail[child] = parent === 0 ? 0 : this.step(this.fail[parent]!, code)
        this.longest[child] = this.longest[child]! || this.longest[this.fail[child]]!
        queue.push(child)
      }
    }
  }
}

/** Push `span`, merging it with the spans from `first` on that it overlaps or touches (their ends only grow), so a text full of matches keeps few spans. */
function pushMerged(spans: Span[], first: number, span: Span): void {
  let start = span[0]
  while (spans.length > first && spans[spans.length - 1]![1] >= start) start = Math.min(start, spans.pop()![0])
  spans.push([start, span[1]])
}
