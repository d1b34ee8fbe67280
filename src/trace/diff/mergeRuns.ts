import { type JsonValue, type Run, type Step, makeRunId } from '../../objects/Run.js'
import { hashPayload } from '../core/stepHash.js'

/** What the merged run says about the steps FROM took after the runs parted. */
export type RunSummarizer = (steps: readonly Step[], context: { theirs: Run; changedPaths: readonly string[] }) => JsonValue

/**
 * The default summary, deterministic: how many steps of each type, which tools were called
 * (in order of first call), and the workspace paths the other side changed.
 */
export const summarizeSteps: RunSummarizer = (steps, { changedPaths }) => {
  const byType: Record<string, number> = {}
  const tools: string[] = []
  for (const step of steps) {
    byType[step.type] = (byType[step.type] ?? 0) + 1
    if (step.type === 'tool' && !tools.includes(step.name)) tools.push(step.name)
  }
  return { steps: steps.length, byType, tools, files: [...changedPaths] }
}

/** Two steps are the same step of one history when name, type and both payloads match. */
const sameStep = (a: Step, b: Step): boolean => a.name === b.name && a.type === b.type && a.inputHash === b.inputHash && a.outputHash === b.outputHash

/**
 * Merge two runs that grew from one conversation: the steps they share from the start, then
 * ours' continuation as it is (the run the merged image goes on with), then one `merge`
 * step summing up what theirs did after the two parted, so the agent resuming from the
 * merged image knows of it without replaying it.
 */
export function mergeRuns({
  ours,
  theirs,
  changedPaths = [],
  summarize = summarizeSteps,
  now = () => new Date(),
}: {
  ours: Run
  theirs: Run
  changedPaths?: readonly string[]
  summarize?: RunSummarizer
  now?: () => Date
}): Run {
  let shared = 0
  while (shared < ours.steps.length && shared < theirs.steps.length && sameStep(ours.steps[shared]!, theirs.steps[shared]!)) shared++
  const theirsAfter = theirs.steps.slice(shared)
  const at = now()
  const input: JsonValue = { from: theirs.runId, sharedSteps: shared }
  const output = summarize(theirsAfter, { theirs, changedPaths })
  const summary: Step = {
    idx: ours.steps.length,
    name: 'merge',
    type: 'step',
    input,
    output,
    inputHash: hashPayload(input),
    outputHash: hashPayload(output),
    startedAt: at.toISOString(),
    durationMs: 0,
  }
  return {
    ...ours,
    runId: makeRunId(at.getTime()),
    parent: ours.runId,
    endedAt: at.toISOString(),
    steps: [...ours.steps, summary],
    meta: { ...ours.meta, merge: { ours: ours.runId, theirs: theirs.runId, sharedSteps: shared } },
  }
}
