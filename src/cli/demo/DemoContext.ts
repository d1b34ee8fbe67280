import { pc } from '../../operations/text/colors.js'

/** What each demo step gets: a scratch root, and a way to narrate. */
export interface DemoContext {
  /** A temporary directory the demo owns and removes at the end. */
  root: string
  say(title: string): void
  show(text: string): void
  /** Fail the demo with a clear message unless `cond` holds. */
  check(cond: boolean, what: string): void
}

export function makeDemoContext(root: string, out: (s: string) => void = (s) => process.stdout.write(s)): DemoContext {
  let step = 0
  return {
    root,
    say: (title) => out(`\n${pc.bold(pc.cyan(`[${++step}] ${title}`))}\n`),
    show: (text) => out(`${text.replace(/^/gm, '    ')}\n`),
    check: (cond, what) => {
      if (!cond) throw new Error(`demo check failed: ${what}`)
      out(`    ${pc.green('✓')} ${what}\n`)
    },
  }
}

export type DemoStep = (ctx: DemoContext) => Promise<void>
