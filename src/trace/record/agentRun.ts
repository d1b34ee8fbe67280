import { rmSync, writeFileSync } from 'node:fs'
import { basename } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Store } from '../../store/Store.js'
import { builtEntry } from '../../util/builtEntry.js'
import { createSession, type ReplaySource } from './createSession.js'
import { type DeterministicSettings, formatDeterministic } from './deterministic.js'
import { fileSink, type JournalEntry, type JournalSink, readJournal } from './journal.js'
import { networkNamespaceAvailable, spawnAgent, type AgentExit, type AgentStdout } from './spawnAgent.js'
import { PayloadCipher } from '../redact/payloadCipher.js'
import { defaultUpstreams, startRecordingProxy, type RecordingProxy } from '../capture/recordingProxy.js'
import type { RedactionPolicy } from '../redact/Redactor.js'
import type { EncryptionInfo } from '../core/Run.js'
import { shellQuote } from '../core/shellQuote.js'
import { TRACE_ENV } from './traceEnv.js'

/** How the agent's calls are captured: in-process (`--import forkpoint/register`) or through the local proxy. */
export type CaptureMode = 'register' | 'proxy'

export interface AgentRunArgs {
  store: Store
  command: string[]
  cwd: string
  env: NodeJS.ProcessEnv
  policy: RedactionPolicy
  capture: CaptureMode
  replay?: ReplaySource | undefined
  offline: boolean
  deterministic: DeterministicSettings | null
  stdout: AgentStdout
}

export interface AgentRunOutcome {
  entries: JournalEntry[]
  exit: AgentExit
  startedAt: Date
  endedAt: Date
  encryption?: EncryptionInfo | undefined
}

/**
 * Start the agent under recording (or replay) and collect what every process of it
 * journaled. Shared by `run --record`, `replay` and `ci`; each decides what the
 * outcome means.
 */
export async function runAgent(args: AgentRunArgs): Promise<AgentRunOutcome> {
  const { store, command, cwd, env, policy, capture, replay, offline, deterministic, stdout } = args
  const encryption = replay ? replay.run.encryption : policy.mode === 'encrypt' ? PayloadCipher.fromEnv(env, '--redact encrypt').info() : undefined
  if (replay?.run.encryption) PayloadCipher.fromEnv(env, `replaying encrypted run ${replay.run.runId}`).assertMatches(replay.run.encryption)
  const journal = store.tempPath('journal.ndjson')
  const artifact = replay ? store.tempPath('replay.run.json') : null
  if (artifact && replay) writeFileSync(artifact, JSON.stringify(replay.run), { mode: 0o600 })
  const childEnv: NodeJS.ProcessEnv = {
    ...env,
    [TRACE_ENV.journal]: journal,
    [TRACE_ENV.redact]: replay ? replay.run.redaction : policy.mode,
    [TRACE_ENV.redactRules]: JSON.stringify(policy.rules ?? {}),
    ...(artifact ? { [TRACE_ENV.replay]: artifact, [TRACE_ENV.onMiss]: replay?.onMiss ?? 'fail' } : {}),
    ...(replay?.liveFrom !== undefined ? { [TRACE_ENV.liveFrom]: String(replay.liveFrom) } : {}),
    ...(offline ? { [TRACE_ENV.offline]: '1' } : {}),
    ...(deterministic ? { [TRACE_ENV.deterministic]: formatDeterministic(deterministic) } : {}),
  }
  // first, so the guard and capture are in place before any other preload can reach the network
  if (capture === 'register') childEnv['NODE_OPTIONS'] = `--import=${pathToFileURL(builtEntry('trace', 'register.js')).href} ${env['NODE_OPTIONS'] ?? ''}`.trim()
  else childEnv[TRACE_ENV.http] = '0'
  const abort = new AbortController()
  let proxy: RecordingProxy | null = null
  let proxySink: JournalSink | null = null
  let bridgeSocket: string | undefined
  if (capture === 'proxy') {
    proxySink = fileSink(journal)
    const session = createSession({ policy, sink: proxySink, replay, env })
    session.onDivergence = () => abort.abort()
    bridgeSocket = offline && networkNamespaceAvailable() ? store.tempPath('proxy.sock') : undefined
    proxy = await startRecordingProxy({ session, upstreams: defaultUpstreams(env), ...(bridgeSocket ? { socketPath: bridgeSocket } : {}) })
    Object.assign(childEnv, proxy.env)
  }
  const startedAt = new Date()
  try {
    const exit = await spawnAgent({ command, env: childEnv, cwd, offline, stdout, signal: abort.signal, ...(bridgeSocket ? { bridgeSocket } : {}) })
    await proxy?.close()
    proxySink?.close()
    return { entries: readJournal(journal), exit, startedAt, endedAt: new Date(), encryption }
  } finally {
    await proxy?.close()
    proxySink?.close()
    for (const path of [journal, artifact, bridgeSocket]) if (path) rmSync(path, { force: true })
  }
}

/**
 * A readable name for the agent: the script an interpreter runs, else the program; a
 * shell given its script inline (`sh -c '…'`) is named by the whole command as given,
 * since no file names it. Give it a command whose secrets are already redacted.
 */
export function entrypointName(command: string[]): string {
  const interpreters = /^(node|nodejs|python\d?(\.\d+)?|deno|bun|tsx|ts-node|ruby|perl|bash|sh)$/
  const [program = 'agent', ...rest] = command
  if (/^(sh|bash|dash|zsh|ksh|ash|busybox)$/.test(basename(program)) && rest.some((a) => /^-[a-z]*c[a-z]*$/.test(a))) return shellQuote(command)
  const script = interpreters.test(basename(program)) ? rest.find((a) => !a.startsWith('-')) : undefined
  return basename(script ?? program)
}
