import { resolve } from 'node:path'
import type { Digest } from '../../objects/digest.js'
import { assembleRun } from './assembleRun.js'
import { createSession } from './createSession.js'
import { diffRuns, type RunDiff } from '../diff/diffRuns.js'
import { memorySink } from './journal.js'
import type { RedactionRules } from '../redact/Redactor.js'
import { failOnJournalEvents } from './journalEvents.js'
import { makeRunId, type RedactionMode, type Run, type StepType } from '../../objects/Run.js'
import { writeRunArtifact } from '../core/runArtifact.js'
import { RunStore } from '../core/RunStore.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { Session } from './Session.js'
import { TRACE_ENV } from './traceEnv.js'
import '../../util/disposeSymbols.js'

export interface RecorderOptions extends StoreLocator {
  entrypoint: string
  redact?: RedactionMode
  rules?: RedactionRules
  /** Serve steps from this run instead of running them (in-process replay). */
  replay?: Run
  /** Keep the finished run in the store (default true); false returns it only. */
  save?: boolean
  /** Also write the run artifact here. */
  out?: string
  env?: NodeJS.ProcessEnv
}

/** What `finish()` gives back: the run this Recorder recorded, or (inside `forkpoint run`/`replay`) the note that the parent records it. */
export type RecorderResult = { kind: 'recorded'; run: Run; digest: Digest | null; artifact: string | null; diff: RunDiff | null } | { kind: 'attached' }

/**
 * The recording SDK. Each `step` runs its function and records name, input, output or
 * error and timing; during replay it returns the recorded output without running it.
 * Inside a process started by `forkpoint run --record` / `replay` (or with
 * `--import forkpoint/register`) it joins that recording, so SDK steps and captured
 * HTTP calls land in one run, in call order.
 *
 * @example
 * const rec = await Recorder.start({ entrypoint: 'triage' })
 * const plan = await rec.llm('plan', { prompt }, () => callModel(prompt))
 * await rec.tool('search', { q: plan.query }, () => search(plan.query))
 * const { run } = await rec.finish()
 * Disposing it (`await using rec = ...`) finishes a run not finished yet as `failed`.
 */
export class Recorder implements AsyncDisposable {
  #finished: Promise<RecorderResult> | null = null

  private constructor(
    private readonly session: Session,
    private readonly owned: { options: RecorderOptions; sink: ReturnType<typeof memorySink>; startedAt: Date } | null,
  ) {}

  /** Whether a Recorder started now would join the run of a surrounding `forkpoint run --record` or `replay`. */
  static insideCommand(env: NodeJS.ProcessEnv = process.env): boolean {
    return Session.current() !== null || Boolean(env[TRACE_ENV.journal])
  }

  static async start(options: RecorderOptions): Promise<Recorder> {
    const env = options.env ?? process.env
    if (!Session.current() && env[TRACE_ENV.journal]) (await import('./installFromEnv.js')).installFromEnv(env)
    const shared = Session.current()
    if (shared && !options.replay) return new Recorder(shared, null)
    const sink = memorySink()
    const session = createSession({ policy: { mode: options.redact ?? 'secrets', rules: options.rules ?? {} }, sink, replay: options.replay && { run: options.replay }, env })
    return new Recorder(session, { options, sink, startedAt: new Date() })
  }

  /** Record `fn` as a step of `type` (default `step`). */
  step<T>(name: string, input: unknown, fn: () => T | Promise<T>, type: StepType = 'step'): Promise<T> {
    return this.session.call({ name, type, input }, fn)
  }

  llm<T>(name: string, input: unknown, fn: () => T | Promise<T>): Promise<T> {
    return this.step(name, input, fn, 'llm')
  }

  tool<T>(name: string, input: unknown, fn: () => T | Promise<T>): Promise<T> {
    return this.step(name, input, fn, 'tool')
  }

  /** An input from outside the agent (a user's message, a file read): served from the recording on replay. */
  input<T>(name: string, read: () => T | Promise<T>): Promise<T> {
    return this.session.call({ name, type: 'input', input: null }, read)
  }

  /** What the agent produced: always the live value, compared with the recording on replay. */
  output<T>(name: string, value: T): Promise<T> {
    return this.session.call({ name, type: 'output', input: null, serve: false }, () => value)
  }

  /** End the run: store it (and write `out`), or, during in-process replay, compare it with the recording. */
  finish({ status = 'ok' }: { status?: Run['status'] } = {}): Promise<RecorderResult> {
    this.#finished ??= this.#finish(status)
    return this.#finished
  }

  /** A run that did not reach `finish()`: kept, as `failed`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.finish({ status: 'failed' })
  }

  async #finish(status: Run['status']): Promise<RecorderResult> {
    if (!this.owned) return { kind: 'attached' }
    const { options, sink, startedAt } = this.owned
    if (options.replay) failOnJournalEvents(sink.entries)
    const run = assembleRun(sink.entries, {
      runId: makeRunId(startedAt.getTime()),
      entrypoint: options.entrypoint,
      startedAt,
      endedAt: new Date(),
      status,
      redaction: options.replay?.redaction ?? options.redact ?? 'secrets',
      encryption: options.replay?.encryption ?? this.session.sealer.cipher?.info(),
      parent: options.replay?.runId,
      meta: options.rules ? { capture: 'sdk', redactionRules: options.rules as { [key: string]: string[] } } : { capture: 'sdk' },
    })
    const diff = options.replay ? diffRuns({ a: options.replay, b: run, cipher: this.session.sealer.cipher }) : null
    let digest: Digest | null = null
    if (options.save !== false && !options.replay) {
      const runs = RunStore.open({ store: (await openStore(options)).store })
      try {
        digest = await runs.save(run)
      } finally {
        runs.close()
      }
    }
    const artifact = options.out ? resolve(options.dir ?? process.cwd(), options.out) : null
    if (artifact) await writeRunArtifact(artifact, run)
    return { kind: 'recorded', run, digest, artifact, diff }
  }
}
