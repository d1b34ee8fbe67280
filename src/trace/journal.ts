import { closeSync, openSync, readFileSync, writeSync } from 'node:fs'
import { RunArtifactError } from '../errors/index.js'
import type { JsonValue, StepError, StepType } from './Run.js'

/**
 * What a recording process writes as it goes, one JSON line per entry, already
 * redacted (and sealed): the parent assembles the run from it. Several processes (a
 * node agent and its node children, the recording proxy) append to one journal; `key`
 * (`pid:seq`, `pid:seq/n` for copies of served nested steps) keeps their entries apart.
 */
export type JournalEntry = StepEntry | DivergenceEntry | OfflineEntry

export interface StepEntry {
  t: 'step'
  key: string
  parent?: string
  name: string
  type: StepType
  input: JsonValue
  output: JsonValue
  error?: StepError | string
  inputHash: string
  outputHash: string
  /** Epoch milliseconds (fractional) when the call began. */
  at: number
  durationMs: number
  meta?: { [key: string]: JsonValue }
}

/** A call during replay that the recording does not hold. */
export interface DivergenceEntry {
  t: 'divergence'
  at: number
  message: string
  step: { name: string; type: StepType; inputHash: string }
  expected?: { idx: number; name: string } | undefined
}

/** A network access blocked while offline. */
export interface OfflineEntry {
  t: 'offline'
  at: number
  message: string
  target: string
}

export interface JournalSink {
  write(entry: JournalEntry): void
  close(): void
}

/** Appends each entry as one line to a file (O_APPEND, one write per line, so processes do not interleave). */
export function fileSink(path: string): JournalSink {
  let fd: number | null = openSync(path, 'a', 0o600)
  return {
    write(entry) {
      if (fd !== null) writeSync(fd, `${JSON.stringify(entry)}\n`)
    },
    close() {
      if (fd !== null) closeSync(fd)
      fd = null
    },
  }
}

export function memorySink(entries: JournalEntry[] = []): JournalSink & { entries: JournalEntry[] } {
  return { entries, write: (e) => void entries.push(e), close: () => undefined }
}

/** Every entry of a journal file; a torn last line (a killed writer) is dropped, anything else malformed is an error. */
export function readJournal(path: string): JournalEntry[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return []
  }
  const lines = text.split('\n')
  const out: JournalEntry[] = []
  lines.forEach((line, i) => {
    if (line.trim() === '') return
    try {
      out.push(JSON.parse(line) as JournalEntry)
    } catch {
      if (i < lines.length - 1 && lines.slice(i + 1).some((l) => l.trim() !== '')) {
        throw new RunArtifactError(`recording journal ${path} is corrupt at line ${i + 1}`)
      }
    }
  })
  return out
}
