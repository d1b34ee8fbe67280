import type { Run, Step } from '../../objects/Run.js'

function signature(name: string, inputHash: string): string {
  return `${name}\u0000${inputHash}`
}

/**
 * Serves recorded steps to live calls by signature (name + input hash), in recorded
 * order per signature, so concurrent calls that start in another order still match.
 * A served step also covers the steps recorded inside it (its code does not run again).
 * With `liveFrom`, only steps before that index are served; the first call that is not
 * served switches the whole session to live.
 */
export class ReplayMatcher {
  private readonly queues = new Map<string, number[]>()
  private readonly heads = new Map<string, number>()
  private readonly children = new Map<number, number[]>()
  private readonly consumed: Uint8Array
  private nextUnconsumed = 0
  private live = false

  constructor(
    readonly run: Run,
    readonly liveFrom?: number,
  ) {
    this.consumed = new Uint8Array(run.steps.length)
    for (const step of run.steps) {
      const sig = signature(step.name, step.inputHash)
      const queue = this.queues.get(sig)
      if (queue) queue.push(step.idx)
      else this.queues.set(sig, [step.idx])
      const parent = step.meta?.['parent']
      if (typeof parent === 'number') {
        const list = this.children.get(parent)
        if (list) list.push(step.idx)
        else this.children.set(parent, [step.idx])
      }
    }
  }

  get isLive(): boolean {
    return this.live
  }

  /** The recorded step for this call, with the steps nested in it; null when there is none to serve. */
  take(name: string, inputHash: string): { step: Step; nested: Step[] } | null {
    if (this.live) return null
    const sig = signature(name, inputHash)
    const queue = this.queues.get(sig)
    let head = this.heads.get(sig) ?? 0
    while (queue && head < queue.length && this.consumed[queue[head]!]) head++
    this.heads.set(sig, head)
    const idx = queue?.[head]
    if (idx === undefined || (this.liveFrom !== undefined && idx >= this.liveFrom)) {
      if (this.liveFrom !== undefined) this.live = true
      return null
    }
    this.heads.set(sig, head + 1)
    const nested: Step[] = []
    this.consume(idx, nested)
    return { step: this.run.steps[idx]!, nested: nested.slice(1) }
  }

  private consume(idx: number, out: Step[]): void {
    this.consumed[idx] = 1
    out.push(this.run.steps[idx]!)
    for (const child of this.children.get(idx) ?? []) this.consume(child, out)
  }

  /** The first recorded step no call has taken yet: what the agent was expected to do next. */
  expected(): Step | undefined {
    while (this.nextUnconsumed < this.consumed.length && this.consumed[this.nextUnconsumed]) this.nextUnconsumed++
    return this.run.steps[this.nextUnconsumed]
  }
}
