import { type Command, Option } from 'commander'
import type { RedactionRules } from '../trace/redact/Redactor.js'
import { type RedactionRuleFlags, redactionRules } from '../trace/redact/userRules.js'
import { UsageError } from '../errors/index.js'
import { REDACTION_MODES } from '../objects/Run.js'
import type { CaptureMode } from '../trace/record/agentRun.js'

/** `--redact MODE` and the user rules, shared by the commands that record. */
export function redactionOptions(cmd: Command): Command {
  return redactionRuleOptions(
    cmd.addOption(
      new Option(
        '--redact <mode>',
        'secrets (default): drop secrets only; content: also hash prompts and responses (diffable, not replayable); encrypt: AES-256-GCM with FORKPOINT_KEY',
      )
        .choices(REDACTION_MODES)
        .default('secrets'),
    ),
  )
}

/** The user rules alone: what `replay` and `ci check` redact live calls with (a run's own recorded rules are never used). */
export function redactionRuleOptions(cmd: Command): Command {
  const collect = (v: string, prev: string[] = []) => [...prev, v]
  return cmd
    .option('--redact-key <key>', 'also treat this object key / header as secret (repeatable)', collect)
    .option('--redact-path <jsonpath>', 'also redact this JSON path, e.g. $.messages[*].content, $.headers.x-trace, $..password (repeatable)', collect)
    .option('--redact-pattern <regex>', 'also redact every match of this regex (repeatable)', collect)
}

export interface RedactionFlags extends RedactionRuleFlags {
  redact: 'secrets' | 'content' | 'encrypt'
}

/** How a recording command records: redaction, the capture, pinned time and randomness. */
export interface RecordingFlags extends RedactionFlags {
  proxy?: boolean
  egress?: boolean
  deterministic?: boolean
}

/** The recording options of `run --record` and `ci record`, from their flags. */
export function recordingOptions(flags: RecordingFlags): { redact: RedactionFlags['redact']; rules: RedactionRules; capture: CaptureMode; deterministic: boolean } {
  if (flags.proxy && flags.egress) throw new UsageError('--proxy and --egress are two ways to record: choose one')
  const capture: CaptureMode = flags.egress ? 'egress' : flags.proxy ? 'proxy' : 'register'
  return { redact: flags.redact, rules: redactionRules(flags), capture, deterministic: Boolean(flags.deterministic) }
}
