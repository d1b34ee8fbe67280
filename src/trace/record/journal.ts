import { closeSync, writeSync } from 'node:fs'
import { CorruptDataError, RunArtifactError } from '../../errors/index.js'
import type { Step, StepType } from '../../objects/Run.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import { openAppendSync } from '../../util/untrustedRead.js'

/**
 * What a recording process writes as it goes, one JSON line per entry, already
 * redacted (and sealed): the parent assembles the run from it. Several processes (a
 * node agent and its node children, the recording proxy) append to one journal; `key`
 * (`pid:seq`, `pid:seq/n` for copies of served nested steps) keeps their entries apart.
 */
export type JournalEntry = StepEntry | DivergenceEntry | OfflineEntry

/** A finished step as journaled: a Step before the parent numbers it (`key` instead of `idx`, `at` instead of `startedAt`). */
export type StepEntry = Pick<Step, 'name' | 'type' | 'input' | 'output' | 'error' | 'inputHash' | 'outputHash' | 'durationMs' | 'meta'> & {
  t: 'step'
  key: string
  parent?: string
  /** Epoch milliseconds (fractional) when the call began. */
  at: number
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

const FLUSH_BYTES = 256 * 1024

/**
 * Appends entries as lines to a file opened O_APPEND, in whole lines per write so
 * processes sharing the journal never interleave. Lines written in one turn of the event
 * loop go out together at its end (or at 256 KiB, or on close at exit): a tight loop of
 * 10,000 steps is a handful of system calls, while a step followed by any I/O is on disk
 * before the I/O, so an agent killed outright loses at most the steps of its last turn.
 */
export function fileSink(path: string): JournalSink {
  let fd: number | null = openAppendSync(path, 0o600, () => new CorruptDataError(`${path} is not a regular file: refusing to append the journal to it`, { path }))
  let pending = ''
  let timer: NodeJS.Immediate | null = null
  const flush = () => {
    if (timer) clearImmediate(timer)
    timer = null
    if (fd !== null && pending) writeSync(fd, pending)
    pending = ''
  }
  return {
    write(entry) {
      pending += `${JSON.stringify(entry)}\n`
      if (pending.length >= FLUSH_BYTES) flush()
      else if (!timer) timer = setImmediate(flush).unref()
    },
    close() {
      flush()
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
    text = readStateTextOrNull(path) ?? ''
  } catch {
    return [] // not a regular file: nothing a recorder wrote
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
