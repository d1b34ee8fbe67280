import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { isForkpointError } from '../../errors/index.js'
import { builtEntry } from '../../util/builtEntry.js'
import { parseDeterministic, pinClockAndRandom } from './deterministic.js'
import { installHttpCapture } from '../capture/httpCapture.js'
import { EFFECTS_PROXY_ENV } from '../capture/effectsProxyProtocol.js'
import type { IngestHeader } from './ingestJournal.js'
import { fileSink } from './journal.js'
import { sessionFromEnv } from './sessionFromEnv.js'
import { installOfflineGuard } from '../replay/offlineGuard.js'
import { makeRunId } from '../../objects/Run.js'
import { preciseNow, Session } from './Session.js'
import { TRACE_ENV } from './traceEnv.js'
import { parseRedactionMode } from './createSession.js'

/**
 * What `node --import forkpoint/register` does: set up this process's session from the
 * environment a forkpoint parent gave it (journal, replay source, redaction, offline,
 * determinism) and capture its HTTP. Without a parent it records on its own and saves
 * the run into the store found from the working directory when the process exits.
 */
export function installFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  if (Session.current()) return
  try {
    install(env)
  } catch (err) {
    process.stderr.write(`forkpoint: ${(err as Error).message}\n`)
    process.exit(isForkpointError(err) ? err.exitCode : 6)
  }
}

function install(env: NodeJS.ProcessEnv): void {
  const standalone = !env[TRACE_ENV.journal]
  const journal = env[TRACE_ENV.journal] || join(tmpdir(), `forkpoint-journal-${process.pid}-${randomBytes(4).toString('hex')}.ndjson`)
  const deterministic = parseDeterministic(env[TRACE_ENV.deterministic])
  if (deterministic) pinClockAndRandom(deterministic)
  const sink = fileSink(journal)
  const session = sessionFromEnv(env, sink)
  if (env[TRACE_ENV.offline] === '1') {
    installOfflineGuard((err) => sink.write({ t: 'offline', at: preciseNow(), message: err.message, target: String(err.data['target']) }))
  }
  // The parent reports the divergence (it is in the journal); the agent stops at once.
  session.onDivergence = () => setImmediate(() => process.exit(3))
  Session.install(session)
  if (env[TRACE_ENV.http] !== '0') installHttpCapture({ effectsProxy: env[EFFECTS_PROXY_ENV] || undefined })
  const startedAt = new Date()
  process.on('exit', (code) => {
    sink.close()
    if (standalone) {
      const redaction = parseRedactionMode(env[TRACE_ENV.redact])
      ingestAtExit(journal, code, { startedAt, redaction, encryption: session.sealer.cipher?.info(), store: env['FORKPOINT_STORE'] })
    }
  })
}

interface StandaloneRun {
  startedAt: Date
  redaction: IngestHeader['redaction']
  encryption: IngestHeader['encryption']
  /** The store the run is saved into (`$FORKPOINT_STORE`), else the one found from the working directory. */
  store: string | undefined
}

function ingestAtExit(journal: string, code: number, { startedAt, redaction, encryption, store }: StandaloneRun): void {
  const header: IngestHeader = {
    runId: makeRunId(startedAt.getTime()),
    entrypoint: process.argv[1] ? basename(process.argv[1]) : 'node',
    startedAt: startedAt.toISOString(),
    endedAt: new Date().toISOString(),
    status: code === 0 ? 'ok' : 'failed',
    redaction,
    encryption,
    meta: { exitCode: code, capture: 'register' },
  }
  const { NODE_OPTIONS: _drop, ...env } = process.env
  spawnSync(process.execPath, [builtEntry('trace/record', 'ingestJournal.js'), journal, JSON.stringify(header), ...(store ? [store] : [])], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  })
}
