/**
 * How a recording parent (`forkpoint run --record`, `replay`, `ci`) tells the agent
 * processes it starts what to do. Every variable is read by `forkpoint/register` and
 * by `Recorder.start` inside the agent.
 */
export const TRACE_ENV = {
  /** Journal file the process appends its steps to. */
  journal: 'FORKPOINT_TRACE_JOURNAL',
  /** Run artifact to serve steps from (replay, ci check). */
  replay: 'FORKPOINT_TRACE_REPLAY',
  /** Serve only steps before this index, then go live. */
  liveFrom: 'FORKPOINT_TRACE_LIVE_FROM',
  /** `fail` (replay) or `offline-error` (ci check). */
  onMiss: 'FORKPOINT_TRACE_ON_MISS',
  /** `1`: block all network access in-process. */
  offline: 'FORKPOINT_TRACE_OFFLINE',
  /** `secrets` | `content` | `encrypt`. */
  redact: 'FORKPOINT_REDACT',
  /** JSON of RedactionRules. */
  redactRules: 'FORKPOINT_REDACT_RULES',
  /** `0`: do not capture HTTP in-process (the proxy records it). */
  http: 'FORKPOINT_TRACE_HTTP',
  /** `epochMs:seed` to pin Date and Math.random. */
  deterministic: 'FORKPOINT_DETERMINISTIC',
} as const
