import { UsageError } from '../../errors/index.js'
import type { RedactionMode } from '../../objects/Run.js'
import type { RedactionRules } from '../redact/Redactor.js'
import { type RedactionRuleFlags, redactionRules } from '../redact/userRules.js'
import type { CaptureMode } from './agentRun.js'

/** How a recording records, as a caller's flags say it: redaction, the capture, pinned time and randomness. */
export interface RecordingFlags extends RedactionRuleFlags {
  /** default: secrets */
  redact?: RedactionMode | undefined
  proxy?: boolean | undefined
  egress?: boolean | undefined
  deterministic?: boolean | undefined
}

/** The recording options of `run --record` and `ci record`, from their flags. @throws {UsageError} both captures asked for, or a rule that does not parse */
export function recordingOptions(flags: RecordingFlags): { redact: RedactionMode; rules: RedactionRules; capture: CaptureMode; deterministic: boolean } {
  if (flags.proxy && flags.egress) throw new UsageError('--proxy and --egress are two ways to record: choose one')
  const capture: CaptureMode = flags.egress ? 'egress' : flags.proxy ? 'proxy' : 'register'
  return { redact: flags.redact ?? 'secrets', rules: redactionRules(flags), capture, deterministic: Boolean(flags.deterministic) }
}
