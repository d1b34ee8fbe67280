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
import { recordedAnswer } from '../capture/recordedAnswer.js'
import { type LiveAnswer, fetchLive } from '../capture/liveAnswer.js'
import { OfflineViolationError } from '../../errors/index.js'
import { type EgressServer, startEgressServer } from '../../sandbox/egressServer.js'
import { caVariables } from '../../sandbox/runSandboxed.js'
import { storeCa } from '../../sandbox/storeCa.js'
import type { RedactionPolicy } from '../redact/Redactor.js'
import type { EncryptionInfo, Run } from '../../objects/Run.js'
import { shellQuote } from '../core/shellQuote.js'
import { TRACE_ENV } from './traceEnv.js'

/**
 * How the agent's calls are captured: in-process (`--import forkpoint/register`), through
 * the local LLM proxy (its base-URL variables), or through the egress proxy (a network of
 * the agent's own whose every connection it sees, HTTPS ended with the store's CA).
 */
export type CaptureMode = 'register' | 'proxy' | 'egress'

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
  /** Where the egress proxy gets live answers (an effects policy's ledger and outbox, say). @default the server */
  live?: LiveAnswer
}

export interface AgentRunOutcome {
  entries: JournalEntry[]
  exit: AgentExit
  /** `ADDRESS:PORT` of each connection the egress proxy refused, for being neither HTTP nor TLS. */
  refused: string[]
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
  const { store, command, cwd, env, policy, capture, replay, offline, deterministic, stdout, live = fetchLive } = args
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
  let egress: EgressServer | null = null
  let proxySink: JournalSink | null = null
  let bridgeSocket: string | undefined
  let caFile: string | undefined
  const close = async () => {
    await proxy?.close()
    await egress?.close()
    proxySink?.close()
  }
  try {
    if (capture !== 'register') {
      proxySink = fileSink(journal)
      const session = createSession({ policy, sink: proxySink, replay, env })
      session.onDivergence = () => abort.abort()
      if (capture === 'egress') {
        const ca = await storeCa(store)
        caFile = store.tempPath('ca.pem')
        writeFileSync(caFile, ca.certPem, { mode: 0o644 })
        egress = await startEgressServer({ answer: recordedAnswer(session, offline ? offlineLive : live), ca })
        Object.assign(childEnv, caVariables(caFile))
      } else {
        bridgeSocket = offline && networkNamespaceAvailable() ? store.tempPath('proxy.sock') : undefined
        proxy = await startRecordingProxy({ session, upstreams: defaultUpstreams(env), ...(bridgeSocket ? { socketPath: bridgeSocket } : {}) })
        Object.assign(childEnv, proxy.env)
      }
    }
    const startedAt = new Date()
    const exit = await spawnAgent({
      command,
      env: childEnv,
      cwd,
      offline,
      stdout,
      signal: abort.signal,
      ...(bridgeSocket ? { bridgeSocket } : {}),
      ...(egress ? { egress: { socket: egress.net.socket, token: egress.net.token } } : {}),
    })
    await close()
    return { entries: readJournal(journal), exit, refused: egress?.refused ?? [], startedAt, endedAt: new Date(), encryption }
  } finally {
    await close()
    for (const path of [journal, artifact, bridgeSocket, caFile]) if (path) rmSync(path, { force: true })
  }
}

/** How a recorded run was captured, so that its replay serves it the same way. */
export function recordedCapture(run: Run): CaptureMode {
  const capture = run.meta['capture']
  return capture === 'proxy' || capture === 'egress' ? capture : 'register'
}

/** A replay's live answers: none, the network is closed (the recording serves every call it holds). */
const offlineLive: LiveAnswer = (request) =>
  Promise.reject(new OfflineViolationError(`offline: ${request.method} ${request.url} is not served by the recording`, { target: request.url }))

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
