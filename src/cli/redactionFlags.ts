import { type Command, Option } from 'commander'
import { REDACTION_MODES } from '../objects/Run.js'

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
