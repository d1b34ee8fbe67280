import type { JournalEntry, StepEntry } from './journal.js'
import { type EncryptionInfo, type JsonValue, type RedactionMode, type Run, type RunStatus, RUN_SCHEMA_VERSION, type Step } from '../../objects/Run.js'

export interface RunHeader {
  runId: string
  entrypoint: string
  startedAt: Date
  endedAt: Date
  status: RunStatus
  redaction: RedactionMode
  encryption?: EncryptionInfo | undefined
  parent?: string | undefined
  meta?: { [key: string]: JsonValue }
}

/** Where a journal key sorts: by start time, then by process and call order (`pid:seq/n`). */
function order(entry: StepEntry): [number, number, number, number] {
  const [pidSeq, sub] = entry.key.split('/')
  const [pid, seq] = (pidSeq ?? '').split(':')
  return [entry.at, Number(pid), Number(seq), Number(sub ?? 0)]
}

function inCallOrder(entries: StepEntry[]): StepEntry[] {
  const keyed = entries.map((entry) => ({ entry, key: order(entry) }))
  keyed.sort((a, b) => {
    for (let i = 0; i < 4; i++) if (a.key[i]! !== b.key[i]!) return a.key[i]! - b.key[i]!
    return 0
  })
  return keyed.map((k) => k.entry)
}

/** Journal entries (from any number of processes) as one run: steps in call order, nesting as `meta.parent` indexes. */
export function assembleRun(entries: JournalEntry[], header: RunHeader): Run {
  const stepEntries = inCallOrder(entries.filter((e): e is StepEntry => e.t === 'step'))
  const idxByKey = new Map(stepEntries.map((e, idx) => [e.key, idx]))
  const steps: Step[] = stepEntries.map((e, idx) => {
    const parentIdx = e.parent === undefined ? undefined : idxByKey.get(e.parent)
    const meta = { ...(e.meta ?? {}), ...(parentIdx !== undefined ? { parent: parentIdx } : {}) }
    return {
      idx,
      name: e.name,
      type: e.type,
      input: e.input,
      output: e.output,
      ...(e.error !== undefined ? { error: e.error } : {}),
      inputHash: e.inputHash,
      outputHash: e.outputHash,
      startedAt: new Date(e.at).toISOString(),
      durationMs: Math.round(e.durationMs * 1000) / 1000,
      ...(Object.keys(meta).length > 0 ? { meta } : {}),
    }
  })
  return {
    kind: 'run',
    schemaVersion: RUN_SCHEMA_VERSION,
    runId: header.runId,
    entrypoint: header.entrypoint,
    startedAt: header.startedAt.toISOString(),
    endedAt: header.endedAt.toISOString(),
    status: header.status,
    redaction: header.redaction,
    ...(header.encryption ? { encryption: header.encryption } : {}),
    ...(header.parent ? { parent: header.parent } : {}),
    steps,
    meta: header.meta ?? {},
  }
}
