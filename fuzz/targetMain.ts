/**
 * One fuzz target in a process of its own (`node --import tsx targetMain.ts MODULE
 * TARGET CONTEXT`): MODULE's `openTarget(TARGET, CONTEXT)` gives the function under test;
 * each input that comes over IPC is run through it and judged (fuzz/oracle.ts), and the
 * verdict goes back with the process's peak RSS. A hang or a crash is for the parent to see.
 */
import { pathToFileURL } from 'node:url'
import { judgeError, type Misbehaviour } from './oracle.js'
import type { OpenTarget } from './Target.js'

export interface Verdict {
  misbehaviour: Misbehaviour | null
  /** Whether the target took the input without an error. */
  accepted: boolean
  peakRssBytes: number
}

const [modulePath, target, context] = process.argv.slice(2) as [string, string, string]
const { openTarget } = (await import(pathToFileURL(modulePath).href)) as { openTarget: OpenTarget }
const run = await openTarget(target, JSON.parse(context) as Record<string, string>)

process.on('message', (input: Buffer) => {
  void judge(Buffer.from(input)).then((outcome) => {
    const verdict: Verdict = { ...outcome, peakRssBytes: process.resourceUsage().maxRSS * 1024 }
    process.send!(verdict)
  })
})
process.send!('ready')

async function judge(input: Buffer): Promise<Pick<Verdict, 'misbehaviour' | 'accepted'>> {
  try {
    await run(input)
    return { misbehaviour: null, accepted: true }
  } catch (err) {
    return { misbehaviour: judgeError(err), accepted: false }
  }
}
