import { hashPayload } from '../../src/trace/core/stepHash.js'
import { type JsonValue, type Run, type Step, type StepType } from '../../src/objects/Run.js'

/** A hand-built step: `['llm', 'plan', {q: 1}, 'out']`. */
export type StepSpec = [type: StepType, name: string, input: JsonValue, output: JsonValue, error?: string]

export function makeRun(steps: StepSpec[], runId = 'run-0000000000000000000a'): Run {
  return {
    kind: 'run',
    schemaVersion: 1,
    runId,
    entrypoint: 'fixture',
    startedAt: '2025-01-01T00:00:00.000Z',
    endedAt: '2025-01-01T00:00:01.000Z',
    status: 'ok',
    redaction: 'secrets',
    meta: {},
    steps: steps.map(([type, name, input, output, error], idx): Step => ({
      idx,
      name,
      type,
      input,
      output,
      ...(error ? { error: { name: 'Error', message: error } } : {}),
      inputHash: hashPayload(input),
      outputHash: hashPayload(output),
      startedAt: '2025-01-01T00:00:00.000Z',
      durationMs: 1,
    })),
  }
}
