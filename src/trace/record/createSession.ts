import { ReplayNotPossibleError, UsageError } from '../../errors/index.js'
import type { JournalSink } from './journal.js'
import { PayloadCipher } from '../redact/payloadCipher.js'
import { type RedactionPolicy, Redactor } from '../redact/Redactor.js'
import { ReplayMatcher } from '../replay/ReplayMatcher.js'
import type { RedactionMode, Run } from '../../objects/Run.js'
import { type MissPolicy, Session } from './Session.js'
import { StepSealer } from '../redact/StepSealer.js'

export interface ReplaySource {
  run: Run
  liveFrom?: number | undefined
  onMiss?: MissPolicy
}

/**
 * A session that records with `policy`, or (with `replay`) serves the recorded run and
 * records what it serves, in the recording's redaction mode so live requests hash to the
 * recorded signatures. The user rules are always the caller's (`policy.rules`): rules a
 * run carries in `meta.redactionRules` are data from whoever wrote the run, never
 * compiled (a pattern there could backtrack for hours).
 */
export function createSession({
  policy,
  sink,
  replay,
  env,
}: {
  policy: RedactionPolicy
  sink: JournalSink
  replay?: ReplaySource | undefined
  /** The recorded process's environment: FORKPOINT_KEY, and the secret values to scrub. */
  env: NodeJS.ProcessEnv
}): Session {
  const sealer = sessionSealer({ policy, replay, env })
  const matcher = replay ? new ReplayMatcher(replay.run, replay.liveFrom) : null
  return new Session(sealer, sink, matcher, replay?.onMiss ?? 'fail')
}

/**
 * How a session's steps are redacted and encrypted (a run that closes a session's steps is
 * marked with its mode and key): `policy`'s, or with `replay` the recording's mode.
 * @throws {ReplayNotPossibleError} a replay of a run recorded with --redact content
 */
export function sessionSealer({ policy, replay, env }: { policy: RedactionPolicy; replay?: ReplaySource | undefined; env: NodeJS.ProcessEnv }): StepSealer {
  const mode: RedactionMode = replay ? replay.run.redaction : policy.mode
  if (replay && mode === 'content') {
    throw new ReplayNotPossibleError(`run ${replay.run.runId} was recorded with --redact content: its payloads are hashes, so it can be diffed but not replayed`)
  }
  const cipher = mode === 'encrypt' ? PayloadCipher.fromEnv(env, replay ? `replaying encrypted run ${replay.run.runId}` : '--redact encrypt') : null
  if (cipher && replay?.run.encryption) cipher.assertMatches(replay.run.encryption)
  return new StepSealer(new Redactor({ mode, rules: policy.rules ?? {}, env }), cipher)
}

export function parseRedactionMode(text: string | undefined): RedactionMode {
  const mode = text ?? 'secrets'
  if (mode !== 'secrets' && mode !== 'content' && mode !== 'encrypt') throw new UsageError(`--redact must be secrets, content or encrypt (got ${JSON.stringify(mode)})`)
  return mode
}
