import { resolve } from 'node:path'
import type { Digest } from '../../objects/digest.js'
import { type CaptureMode, entrypointName, runAgent } from './agentRun.js'
import { refusedWarning } from '../../sandbox/egressServer.js'
import type { LiveAnswer } from '../capture/liveAnswer.js'
import { assembleRun } from './assembleRun.js'
import type { DeterministicSettings } from './deterministic.js'
import { Redactor, type RedactionRules } from '../redact/Redactor.js'
import { type JsonValue, makeRunId, type RedactionMode, type Run } from '../../objects/Run.js'
import { writeRunArtifact } from '../core/runArtifact.js'
import { RunStore } from '../core/RunStore.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { AgentStdout } from './spawnAgent.js'

export interface RecordCommandArgs extends StoreLocator {
  /** The agent command line, e.g. `['node', 'agent.js']` or `['python', 'agent.py']`. */
  command: string[]
  entrypoint?: string
  redact?: RedactionMode
  rules?: RedactionRules
  /**
   * How calls are captured: `register` in-process (Node agents), `proxy` through the local
   * LLM proxy (its base-URL variables, any language), `egress` through the egress proxy (the
   * agent's every connection, any language and client, HTTPS included). @default 'register'
   */
  capture?: CaptureMode
  /** Where the egress proxy gets live answers (`recordWithEffects`: the effects policy). @default the server */
  live?: LiveAnswer
  /** Pin Date and Math.random in the agent (and again on replay). */
  deterministic?: boolean
  /** Also write the run artifact here. */
  out?: string
  /** The command's environment (its secrets scrubbed from the run; FORKPOINT_KEY encrypts): the caller's, passed down from its edge. */
  env: NodeJS.ProcessEnv
  stdout?: AgentStdout
}

export interface RecordResult {
  runId: string
  digest: Digest | null
  status: Run['status']
  exitCode: number
  steps: number
  artifact: string | null
  run: Run
  /** The agent's stdout, when `stdout: 'capture'`. */
  agentStdout: string
  /** What the egress proxy refused (connections neither HTTP nor TLS), in words. */
  warnings: string[]
}

/**
 * Run an agent command and record it: every LLM / HTTP call (in-process through
 * `forkpoint/register` for Node, or through the local proxy for any language) and
 * every SDK step, redacted before it reaches disk, stored as a run.
 *
 * @example
 * const { runId } = await recordCommand({ command: ['node', 'agent.js'] })
 */
export async function recordCommand(args: RecordCommandArgs): Promise<RecordResult> {
  const { command, redact = 'secrets', rules = {}, capture = 'register', deterministic = false, out, env, stdout = 'inherit', live } = args
  const cwd = resolve(args.dir ?? process.cwd())
  const store = (await openStore({ ...args, dir: cwd })).store
  const pinned: DeterministicSettings | null = deterministic ? { epochMs: Date.now(), seed: Math.floor(Math.random() * 2 ** 31) } : null
  const outcome = await runAgent({ store, command, cwd, env, policy: { mode: redact, rules }, capture, offline: false, deterministic: pinned, stdout, ...(live ? { live } : {}) })
  const shownCommand = new Redactor({ mode: 'secrets', rules, env }).redactArgv(command)
  const meta: { [key: string]: JsonValue } = {
    command: shownCommand,
    exitCode: outcome.exit.exitCode,
    capture,
    ...(pinned ? { deterministic: { epochMs: pinned.epochMs, seed: pinned.seed } } : {}),
    ...(Object.keys(rules).length > 0 ? { redactionRules: rules as JsonValue } : {}),
  }
  const run = assembleRun(outcome.entries, {
    runId: makeRunId(outcome.startedAt.getTime()),
    entrypoint: args.entrypoint ?? entrypointName(shownCommand),
    startedAt: outcome.startedAt,
    endedAt: outcome.endedAt,
    status: outcome.exit.exitCode === 0 ? 'ok' : 'failed',
    redaction: redact,
    encryption: outcome.encryption,
    meta,
  })
  const runs = RunStore.open({ store })
  let digest: Digest | null
  try {
    digest = await runs.save(run, { recordedHere: true })
  } finally {
    runs.close()
  }
  const artifact = out ? resolve(cwd, out) : null
  if (artifact) await writeRunArtifact(artifact, run)
  return {
    runId: run.runId,
    digest,
    status: run.status,
    exitCode: outcome.exit.exitCode,
    steps: run.steps.length,
    artifact,
    run,
    agentStdout: outcome.exit.stdout,
    warnings: outcome.refused.map(refusedWarning),
  }
}
