import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import type { Misbehaviour } from './oracle.js'
import type { FuzzTarget } from './Target.js'
import { TargetProcess, type Watchdog } from './TargetProcess.js'

export interface FuzzOptions extends Watchdog {
  /** The module whose `openTarget` the target processes call. */
  module: string
  /** What `openTarget` gets: the corpus's scratch directories. */
  context: Record<string, string>
  runs: number
  seed: number
  /** Stop a target after this long (its inputs so far count); none by default. */
  seconds?: number
  /** Where a finding's input and its description are written. */
  findingsDir: string
}

export interface Finding extends Misbehaviour {
  target: string
  /** The input file written under findingsDir, and its description beside it. */
  file: string
  seed: number
}

export interface TargetReport {
  target: string
  inputs: number
  /** Inputs the target took without an error (the rest it refused with exit 2 or 5). */
  accepted: number
  seconds: number
  findings: Finding[]
}

/** How many shrink candidates follow a finding that came back quickly (a hang, a crash or a memory blow-up is kept as found). */
const SHRINK_BUDGET = 200

/**
 * Run `runs` inputs of one target through its process, as fast-check draws them from
 * `seed` (the same seed draws the same inputs). The first misbehaviour stops the run;
 * fast-check then shrinks the input within SHRINK_BUDGET, and the smallest input that
 * still misbehaves is written to `findingsDir/<target>-<hash>.<ext>` with a JSON beside it.
 */
export async function fuzzTarget(target: FuzzTarget, options: FuzzOptions): Promise<TargetReport> {
  const proc = new TargetProcess(options.module, target.name, options.context, options)
  let inputs = 0
  let accepted = 0
  let failure: { input: Buffer; misbehaviour: Misbehaviour } | null = null
  let shrinks = 0
  const started = performance.now()
  const property = fc.asyncProperty(target.inputs, async (input) => {
    if (failure && (shrinks++ >= SHRINK_BUDGET || !['threw', 'exit6'].includes(failure.misbehaviour.kind))) return true
    if (!failure) inputs++
    const { misbehaviour, accepted: took } = await proc.judge(input)
    if (took && !failure) accepted++
    if (misbehaviour) failure = { input, misbehaviour }
    return misbehaviour === null
  })
  try {
    await fc.check(property, { numRuns: options.runs, seed: options.seed, ...(options.seconds ? { interruptAfterTimeLimit: options.seconds * 1000 } : {}) })
  } finally {
    proc.stop()
  }
  const seconds = (performance.now() - started) / 1000
  const found = failure as { input: Buffer; misbehaviour: Misbehaviour } | null
  const findings = found ? [saveFinding(target, found.input, found.misbehaviour, options)] : []
  return { target: target.name, inputs, accepted, seconds, findings }
}

/** Judge inputs already saved (regression files) through the target's process: the misbehaviour of each, or null. */
export async function replayInputs(
  target: string,
  inputs: Buffer[],
  options: Pick<FuzzOptions, 'module' | 'context' | 'timeoutMs' | 'maxRssBytes'>,
): Promise<Array<Misbehaviour | null>> {
  const proc = new TargetProcess(options.module, target, options.context, options)
  try {
    const verdicts: Array<Misbehaviour | null> = []
    for (const input of inputs) verdicts.push((await proc.judge(input)).misbehaviour)
    return verdicts
  } finally {
    proc.stop()
  }
}

function saveFinding(target: FuzzTarget, input: Buffer, misbehaviour: Misbehaviour, options: FuzzOptions): Finding {
  mkdirSync(options.findingsDir, { recursive: true })
  const hash = createHash('sha256').update(input).digest('hex').slice(0, 12)
  const file = join(options.findingsDir, `${target.name}-${hash}.${target.ext}`)
  writeFileSync(file, input)
  const finding: Finding = { target: target.name, file, seed: options.seed, ...misbehaviour }
  writeFileSync(`${file}.json`, `${JSON.stringify({ target: target.name, seed: options.seed, kind: misbehaviour.kind, detail: misbehaviour.detail }, null, 2)}\n`)
  return finding
}
