import type { JsonValue } from '../objects/Run.js'
import type { Recorder } from '../trace/record/Recorder.js'

/** A call the model is answering: its result, and how its step ends once the output is known. */
export interface LiveCall<T> {
  live: T
  /** End the step with its output (a stream's: once it has been read). */
  end(output: JsonValue): void
  fail(err: unknown): void
  /** Settles once the step is written. */
  written: Promise<void>
}

/**
 * A model call as an `llm` step of `recorder`'s run. Recording, `start` calls the model
 * and the caller gets its result to hand on, and ends the step when the output is known
 * (at once for a response, at the end of a stream). Replaying, the model is not called:
 * the caller gets the recorded output.
 */
export async function startModelCall<T>(recorder: Recorder, name: string, input: JsonValue, start: () => PromiseLike<T>): Promise<LiveCall<T> | { served: JsonValue }> {
  let opened!: (call: LiveCall<T>) => void
  const live = new Promise<LiveCall<T>>((resolve) => (opened = resolve))
  const step = recorder.llm(name, input, async () => {
    const value = await start()
    return new Promise<JsonValue>((end, fail) => opened({ live: value, end, fail, written }))
  })
  const written = step.then(
    () => {},
    () => {}, // a live failure is the caller's to throw; the step keeps it
  )
  const served = step.then((output) => ({ served: output }))
  served.catch(() => {}) // after a live start, only `written` is awaited
  return Promise.race([live, served])
}
