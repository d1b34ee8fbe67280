import { existsSync, promises as fs } from 'node:fs'
import { resolve } from 'node:path'
import { UsageError } from '../../errors/index.js'
import { isInside } from '../../util/isInside.js'
import { acquireLock } from '../../store/lockFile.js'
import { appendImage } from '../../image/appendImage.js'
import { servedScanner } from '../../service/servedScanner.js'
import type { Digest } from '../../objects/digest.js'
import { openStore } from '../../store/findStore.js'
import { refComponent } from '../../store/refComponent.js'
import type { Store } from '../../store/Store.js'
import { makeRunId, type Run } from '../../objects/Run.js'
import { assembleRun } from '../../trace/record/assembleRun.js'
import { sessionFromEnv, sessionSettingsFromEnv } from '../../trace/record/sessionFromEnv.js'
import { sessionSealer } from '../../trace/record/createSession.js'
import type { ServedWorkspace } from '../../service/httpService.js'
import { type JournalEntry, fileSink, readJournal } from '../../trace/record/journal.js'
import type { StepSealer } from '../../trace/redact/StepSealer.js'
import { TRACE_ENV } from '../../trace/record/traceEnv.js'
import { type ClaudeHookEvent, endsRun } from './hookEvent.js'
import { sessionRef } from './sessionRef.js'
import { FORK_BRANCH_ENV } from './hookEnv.js'

export const ENTRYPOINT = 'claude-code'

export interface HookOutcome {
  event: ClaudeHookEvent['hook_event_name']
  /** The image this hook wrote (null: nothing had changed in a fork's branch). */
  image: Digest | null
  /** The ref that image is on: `refs/claude/<session>`, or a fork's `refs/forks/<id>/<i>`. */
  ref: string
  /** Stop: the run it closed (null when the turn made no tool call, or a `forkpoint run --record` around Claude Code keeps the run). */
  run: string | null
}

/**
 * What forkpoint's Claude Code hooks do. PreToolUse and PostToolUse snapshot the files
 * (the workspace, or the fork's branch Claude Code runs in) onto the session's line of
 * images; PostToolUse (and PostToolUseFailure) also records the call (`tool_name`,
 * `tool_input`, `tool_response` or the error) as a `tool` step of the session's run; Stop closes that run and puts it in the image
 * as its trace. Inside `forkpoint run --record` (or `replay`) the steps join the run the
 * command records (or are checked against the recording) and the command closes the run.
 * `env` is the hook process's environment (`FORKPOINT_STORE`, `FORKPOINT_CLAUDE_BRANCH`,
 * the recording parent's journal), which the CLI's `forkpoint claude hook` passes.
 */
export async function handleClaudeHook({ event, env }: { event: ClaudeHookEvent; env: NodeJS.ProcessEnv }): Promise<HookOutcome> {
  const { store, workspace } = await openStore({ dir: event.cwd, store: env['FORKPOINT_STORE'] || undefined })
  // a running service knows from its watcher what changed: the hook need not scan the workspace
  return hookInWorkspace({ event, env, store, workspace, scanner: servedScanner })
}

/** `handleClaudeHook` in a workspace already open, scanned by `scanner`: the store's service answers a hook so, with its own store and its watcher's scanner. */
export async function hookInWorkspace({ event, env, store, workspace, scanner }: { event: ClaudeHookEvent; env: NodeJS.ProcessEnv } & ServedWorkspace): Promise<HookOutcome> {
  const branch = env[FORK_BRANCH_ENV]
  if (!branch && isInside(store.root, resolve(event.cwd))) {
    // a fork's branch lies in the store: without its name the workspace, not the branch, would be snapshotted
    throw new UsageError(`${event.cwd} is inside the store (a fork's branch?) but ${FORK_BRANCH_ENV} is not set: start a fork's session as 'forkpoint claude fork' prints it`, {
      name: event.cwd,
    })
  }
  const joined = Boolean(env[TRACE_ENV.journal])
  if (event.hook_event_name === 'PostToolUse' || event.hook_event_name === 'PostToolUseFailure') await recordToolStep(store, event, env)
  const closed = endsRun(event.hook_event_name) && !joined ? await closeRun(store, event.session_id, env) : null
  const layers = closed ? { trace: closed.digest } : {}
  const message = `${describeEvent(event)} (claude session ${event.session_id.slice(0, 8)})`
  if (branch) {
    // a fork's branch (and the branch machinery with it) loads only for a fork's hooks
    const { snapshotForkBranch } = await import('../../image/snapshotForkBranch.js')
    const made = await snapshotForkBranch({ store, branch, message, agent: ENTRYPOINT, layers })
    return { event: event.hook_event_name, image: made.created ? made.id : null, ref: made.ref, run: closed?.runId ?? null }
  }
  const ref = sessionRef(event.session_id)
  const image = await appendImage({ store, workspace, ref, scan: true, scanner, message, agent: ENTRYPOINT, layers: async () => layers, skipUnchanged: true })
  return { event: event.hook_event_name, image, ref, run: closed?.runId ?? null }
}

function describeEvent(event: ClaudeHookEvent): string {
  if (event.hook_event_name === 'Stop') return 'stop'
  if (event.hook_event_name === 'SessionEnd') return 'session end'
  const call = event.tool_use_id ? ` ${event.tool_use_id}` : ''
  if (event.hook_event_name === 'PostToolUseFailure') return `after ${event.tool_name}${call} failed`
  return `${event.hook_event_name === 'PreToolUse' ? 'before' : 'after'} ${event.tool_name}${call}`
}

/** Where a session's steps wait for its Stop, when no `forkpoint run --record` collects them. */
function sessionJournal(store: Store, sessionId: string): string {
  return store.path('claude', `${refComponent(sessionId, 'session_id')}.journal`)
}

type ToolEnded = Extract<ClaudeHookEvent, { hook_event_name: 'PostToolUse' | 'PostToolUseFailure' }>

/** The error a failed tool call is recorded with. */
class ClaudeToolError extends Error {
  override name = 'ClaudeToolError'
}

/**
 * One `tool` step (its error, for a call that failed), redacted as the run's policy says,
 * appended to the session's journal (or, during a replay, checked against the recording).
 */
async function recordToolStep(store: Store, event: ToolEnded, env: NodeJS.ProcessEnv): Promise<void> {
  const joined = env[TRACE_ENV.journal]
  if (joined) return appendToolStep(joined, event, env)
  await fs.mkdir(store.path('claude'), { recursive: true })
  await withSessionLock(store, event.session_id, () => appendToolStep(sessionJournal(store, event.session_id), event, env))
}

async function appendToolStep(journal: string, event: ToolEnded, env: NodeJS.ProcessEnv): Promise<void> {
  const sink = fileSink(journal)
  try {
    const session = sessionFromEnv(env, sink)
    const outcome = () => {
      if (event.hook_event_name === 'PostToolUseFailure') throw new ClaudeToolError(event.error)
      return event.tool_response
    }
    // serve: false: during a replay the call is matched (in order, by input) but what the tool really did is recorded, so the replay's diff compares it
    await session.call({ name: event.tool_name, type: 'tool', input: event.tool_input, serve: false }, outcome).catch((err: unknown) => {
      // the tool's own failure (live, or served from a recording by name) is the step's; any other is the hook's
      if ((err as Error).name !== 'ClaudeToolError') throw err
    })
  } finally {
    sink.close()
  }
}

/** The session's steps since its last Stop as a run in the store (null when there are none); under the session's lock, so no step is written meanwhile, and the journal goes only once the run is saved. */
async function closeRun(store: Store, sessionId: string, env: NodeJS.ProcessEnv): Promise<{ runId: string; digest: Digest } | null> {
  const journal = sessionJournal(store, sessionId)
  return withSessionLock(store, sessionId, async () => {
    if (!existsSync(journal)) return null
    const entries = readJournal(journal)
    if (!entries.some((e) => e.t === 'step')) {
      await fs.rm(journal, { force: true })
      return null
    }
    // the sealer alone: a closing hook marks the run with its redaction and key, it records no step
    const run = sessionRun(entries, sessionId, sessionSealer({ ...sessionSettingsFromEnv(env), env }))
    // the run store (and SQLite with it) loads only for a turn that made tool calls
    const { RunStore } = await import('../../trace/core/RunStore.js')
    const runs = RunStore.open({ store })
    try {
      const digest = await runs.save(run)
      await fs.rm(journal, { force: true })
      return digest ? { runId: run.runId, digest } : null
    } finally {
      runs.close()
    }
  })
}

async function withSessionLock<T>(store: Store, sessionId: string, fn: () => Promise<T>): Promise<T> {
  const lock = await acquireLock(store.path('locks', 'claude', `${refComponent(sessionId, 'session_id')}.lock`), { what: `the journal of claude session ${sessionId}` })
  try {
    return await fn()
  } finally {
    await lock.release()
  }
}

function sessionRun(entries: JournalEntry[], sessionId: string, sealer: StepSealer): Run {
  const startedAt = new Date(entries.reduce((min, e) => Math.min(min, e.at), Date.now()))
  return assembleRun(entries, {
    runId: makeRunId(startedAt.getTime()),
    entrypoint: ENTRYPOINT,
    startedAt,
    endedAt: new Date(),
    status: 'ok',
    redaction: sealer.redactor.mode,
    encryption: sealer.cipher?.info(),
    meta: { capture: 'claude-code hooks', session: sessionId },
  })
}
