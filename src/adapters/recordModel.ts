import { UsageError } from '../errors/index.js'
import { Recorder, type RecorderOptions } from '../trace/record/Recorder.js'

export type ModelRecordingMode = 'record' | 'replay' | 'auto'

export interface RecordModelOptions extends Omit<RecorderOptions, 'replay'> {
  /** record: call the model and record; replay: serve every call from the latest run of `entrypoint` (none there: an error); auto: replay when there is one, else record. */
  mode?: ModelRecordingMode
}

/**
 * A Recorder for model calls in the mode asked. Replay serves the latest run of the
 * entrypoint that ended well, in process: the model is not called, and a call the
 * recording lacks is an error (ReplayDivergenceError, exit 3). `finish()` stores the run
 * (record) or compares it with the recording (replay). Inside `forkpoint run --record`
 * or `forkpoint replay`, auto joins the run that command makes (recorded or served there).
 */
export async function recordModel({ mode = 'auto', ...options }: RecordModelOptions): Promise<Recorder> {
  if (mode === 'record' || (mode === 'auto' && Recorder.insideCommand(options.env))) return Recorder.start(options)
  const { listRuns } = await import('../trace/core/listRuns.js')
  const [latest] = await listRuns({ dir: options.dir, store: options.store, entrypoint: options.entrypoint, status: 'ok', limit: 1 })
  if (!latest) {
    if (mode === 'auto') return Recorder.start(options)
    throw new UsageError(`no recorded run of ${JSON.stringify(options.entrypoint)} to replay: record one first (mode 'record' or 'auto')`, {
      name: options.entrypoint,
    })
  }
  const { loadRun } = await import('../trace/core/loadRun.js')
  return Recorder.start({ ...options, replay: await loadRun({ dir: options.dir, store: options.store, spec: latest.runId }) })
}
