import { UsageError } from '../../errors/index.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { resolveId } from '../../store/resolveId.js'
import type { Store } from '../../store/Store.js'
import { readSnapshot } from '../../world/tree/readObjects.js'
import { loadStoredRun, readRunObject } from './loadRun.js'
import { isSealed, type JsonValue, type Run, type StepError, type StepType } from '../../objects/Run.js'

/** What an encrypted payload shows without its key. */
const SEALED = '[encrypted]'

export interface TimelineStep {
  idx: number
  name: string
  type: StepType
  input: JsonValue
  output: JsonValue
  error: StepError | string | null
  startedAt: string
  durationMs: number
}

export interface RunTimeline {
  runId: string
  entrypoint: string
  status: string
  startedAt: string
  endedAt: string
  redaction: string
  parent: string | null
  /** All steps of the run; `steps` holds `limit` of them from `offset`. */
  total: number
  offset: number
  steps: TimelineStep[]
}

/**
 * The steps of a run as recorded, for reading: a stored run (`run-…`) or the trace layer of
 * an image (`latest`: the newest stored run). Values the recording redacted stay as it wrote them; encrypted ones show as
 * `[encrypted]`. Never reads a file: a run names a stored run or an image, nothing else.
 * @throws {UsageError} the image has no trace layer
 */
export async function runTimeline({ spec, offset = 0, limit = 500, ...locator }: StoreLocator & { spec: string; offset?: number; limit?: number }): Promise<RunTimeline> {
  const { store } = await openStore(locator)
  const run = spec.startsWith('run-') || spec === 'latest' ? await loadStoredRun(store, spec) : await imageRun(store, spec)
  return {
    runId: run.runId,
    entrypoint: run.entrypoint,
    status: run.status,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    redaction: run.redaction,
    parent: run.parent ?? null,
    total: run.steps.length,
    offset,
    steps: run.steps.slice(offset, offset + limit).map((s) => ({
      idx: s.idx,
      name: s.name,
      type: s.type,
      input: shown(s.input),
      output: shown(s.output),
      error: s.error === undefined ? null : isSealed(s.error) ? SEALED : s.error,
      startedAt: s.startedAt,
      durationMs: s.durationMs,
    })),
  }
}

const shown = (value: JsonValue): JsonValue => (isSealed(value) ? SEALED : value)

async function imageRun(store: Store, spec: string): Promise<Run> {
  const id = await resolveId(store, spec)
  const trace = (await readSnapshot(store, id)).trace
  if (!trace) throw new UsageError(`image ${id} has no trace layer: no run was recorded into it`, { spec })
  return readRunObject(store, trace)
}
