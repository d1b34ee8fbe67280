import { type Command, Option } from 'commander'
import { type RedactionRules, Redactor } from '../trace/redact/Redactor.js'
import { UsageError } from '../errors/index.js'
import type { CaptureMode } from '../trace/record/agentRun.js'

/** `--redact MODE` and the user rules, shared by the commands that record. */
export function redactionOptions(cmd: Command): Command {
  return redactionRuleOptions(
    cmd.addOption(
      new Option(
        '--redact <mode>',
        'secrets (default): drop secrets only; content: also hash prompts and responses (diffable, not replayable); encrypt: AES-256-GCM with FORKPOINT_KEY',
      )
        .choices(['secrets', 'content', 'encrypt'])
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

export interface RedactionRuleFlags {
  redactKey?: string[]
  redactPath?: string[]
  redactPattern?: string[]
}

export interface RedactionFlags extends RedactionRuleFlags {
  redact: 'secrets' | 'content' | 'encrypt'
}

/** The user's rules, checked: a path or pattern that does not parse exits 2 before anything runs. */
export function redactionRules(opts: RedactionRuleFlags): RedactionRules {
  const rules: RedactionRules = {
    ...(opts.redactKey ? { keys: opts.redactKey } : {}),
    ...(opts.redactPath ? { paths: opts.redactPath } : {}),
    ...(opts.redactPattern ? { patterns: opts.redactPattern } : {}),
  }
  Redactor.checkRules(rules)
  return rules
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
