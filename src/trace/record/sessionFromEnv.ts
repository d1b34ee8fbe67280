import { readFileSync } from 'node:fs'
import { parseRun } from '../core/parseRun.js'
import type { RedactionPolicy, RedactionRules } from '../redact/Redactor.js'
import { type ReplaySource, createSession, parseRedactionMode } from './createSession.js'
import type { JournalSink } from './journal.js'
import type { Session } from './Session.js'
import { TRACE_ENV } from './traceEnv.js'

/** What a forkpoint parent's environment asks of a session: its redaction, and the run to serve when it replays. */
export interface SessionSettings {
  policy: RedactionPolicy
  replay: ReplaySource | undefined
}

/** The settings `env` gives (the replayed run read and parsed here). */
export function sessionSettingsFromEnv(env: NodeJS.ProcessEnv): SessionSettings {
  const replayPath = env[TRACE_ENV.replay]
  const run = replayPath ? parseRun(readFileSync(replayPath), replayPath) : undefined
  const liveFrom = env[TRACE_ENV.liveFrom] ? Number(env[TRACE_ENV.liveFrom]) : undefined
  const onMiss = env[TRACE_ENV.onMiss] === 'offline-error' ? 'offline-error' : 'fail'
  const rulesText = env[TRACE_ENV.redactRules]
  const rules = rulesText ? (JSON.parse(rulesText) as RedactionRules) : {}
  return { policy: { mode: parseRedactionMode(env[TRACE_ENV.redact]), rules }, replay: run && { run, liveFrom, onMiss } }
}

/** The session a forkpoint parent's environment asks for (redaction, and the run to serve when it replays), writing to `sink`. */
export function sessionFromEnv(env: NodeJS.ProcessEnv, sink: JournalSink): Session {
  return createSession({ ...sessionSettingsFromEnv(env), sink, env })
}
