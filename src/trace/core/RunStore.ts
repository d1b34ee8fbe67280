import { existsSync, lstatSync } from 'node:fs'
import type Database from 'better-sqlite3'
import { LockTimeoutError, RunArtifactError, RunNotFoundError, UsageError } from '../../errors/index.js'
import { type Digest, isDigest } from '../../objects/digest.js'
import { deleteRef, readRef, updateRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { withWriteLock } from '../../store/storeLock.js'
import { requirePackage } from '../../util/requirePackage.js'
import { parseRun } from './parseRun.js'
import type { Run, RunStatus } from '../../objects/Run.js'
import { runRefName } from './runIds.js'

/** One row of `forkpoint runs`. */
export interface RunSummary {
  runId: string
  digest: Digest | null
  entrypoint: string
  status: RunStatus
  startedAt: string
  endedAt: string
  steps: number
  llmCalls: number
  toolCalls: number
  errors: number
  parent: string | null
  redaction: string
}

export interface ListRunsArgs {
  /** Newest first; at most this many (default 20). */
  limit?: number
  entrypoint?: string
  status?: RunStatus
  /** Only runs with a step whose name contains this text. */
  step?: string
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, digest TEXT, body BLOB, entrypoint TEXT NOT NULL, status TEXT NOT NULL,
  started_at TEXT NOT NULL, ended_at TEXT NOT NULL, steps INTEGER NOT NULL, llm_calls INTEGER NOT NULL,
  tool_calls INTEGER NOT NULL, errors INTEGER NOT NULL, parent TEXT, redaction TEXT NOT NULL, recorded_here INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS runs_started ON runs(started_at DESC, run_id DESC);
CREATE TABLE IF NOT EXISTS run_steps (run_id TEXT NOT NULL, idx INTEGER NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS run_steps_name ON run_steps(name);
`

interface Row {
  run_id: string
  digest: string | null
  entrypoint: string
  status: RunStatus
  started_at: string
  ended_at: string
  steps: number
  llm_calls: number
  tool_calls: number
  errors: number
  parent: string | null
  redaction: string
}

/**
 * Recorded runs: each finished run is a `run` object in the object store (kept alive by
 * its ref, `runRefName`, so snapshots and registries can carry it and gc keeps it), and a
 * row in `runs.db` (SQLite) for listing and search. Opened on a bare `.db` path (no
 * object store), the run bodies live in the database itself.
 */
export class RunStore {
  private constructor(
    readonly db: Database.Database,
    readonly store: Store | null,
  ) {}

  /**
   * The run store of an object store (`<store>/runs.db`). `readOnly`: for readers (listings,
   * the web view): SQLite refuses every write through it, and a store without runs.db is
   * read as one without runs, without making the file.
   */
  static open({ store, readOnly = false }: { store: Store; readOnly?: boolean }): RunStore {
    const path = store.path('runs.db')
    assertRegularOrAbsent(path)
    return new RunStore(readOnly ? openDbReadOnly(path) : openDb(path), store)
  }

  /** A standalone run store in one SQLite file (runs kept in the file). */
  static openFile({ path }: { path: string }): RunStore {
    return new RunStore(openDb(path), null)
  }

  close(): void {
    this.db.close()
  }

  /**
   * Store a finished run; returns its object digest (null for a standalone db).
   * `recordedHere`: only `run --record` sets it, for the run it has just recorded; a run
   * brought from elsewhere (a trace given to `snapshot`, a replay's fork, a journal) is data,
   * and replay never runs its recorded command (see `trustedRecordedCommand`).
   */
  async save(run: Run, { recordedHere = false }: { recordedHere?: boolean } = {}): Promise<Digest | null> {
    let digest: Digest | null = null
    if (this.store) {
      const store = this.store
      digest = await withWriteLock(store, async () => {
        const d = await store.writeObject(run)
        await updateRef({ store, name: runRefName(run.runId), id: d, message: `run: ${run.entrypoint}` })
        return d
      })
    }
    this.index(run, digest, digest ? null : Buffer.from(JSON.stringify(run)), recordedHere)
    return digest
  }

  private index(run: Run, digest: Digest | null, body: Buffer | null, recordedHere: boolean): void {
    const count = (pred: (s: Run['steps'][number]) => boolean) => run.steps.reduce((n, s) => n + (pred(s) ? 1 : 0), 0)
    const insertStep = this.db.prepare('INSERT INTO run_steps (run_id, idx, name, type) VALUES (?, ?, ?, ?)')
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM run_steps WHERE run_id = ?').run(run.runId)
      this.db
        .prepare(
          `INSERT OR REPLACE INTO runs (run_id, digest, body, entrypoint, status, started_at, ended_at, steps, llm_calls, tool_calls, errors, parent, redaction, recorded_here)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          run.runId,
          digest,
          body,
          run.entrypoint,
          run.status,
          run.startedAt,
          run.endedAt,
          run.steps.length,
          count((s) => s.type === 'llm'),
          count((s) => s.type === 'tool'),
          count((s) => s.error !== undefined),
          run.parent ?? null,
          run.redaction,
          recordedHere ? 1 : 0,
        )
      for (const s of run.steps) insertStep.run(run.runId, s.idx, s.name, s.type)
    })()
  }

  list({ limit = 20, entrypoint, status, step }: ListRunsArgs = {}): RunSummary[] {
    const where: string[] = []
    const params: unknown[] = []
    const filter = (clause: string, value: unknown) => {
      where.push(clause)
      params.push(value)
    }
    if (entrypoint) filter('entrypoint = ?', entrypoint)
    if (status) filter('status = ?', status)
    if (step) filter("run_id IN (SELECT run_id FROM run_steps WHERE name LIKE ? ESCAPE '\\')", `%${step.replace(/[\\%_]/g, '\\$&')}%`)
    const sql = `SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY started_at DESC, run_id DESC LIMIT ?`
    return (this.db.prepare(sql).all(...params, limit) as Row[]).map(summary)
  }

  /** The run id `spec` names: a full id, a unique prefix (of a `run-…` id with or without `run-`), or `latest`. */
  resolve(spec: string): string {
    if (spec === 'latest' || spec === 'last') {
      const row = this.db.prepare('SELECT run_id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT 1').get() as { run_id: string } | undefined
      if (!row) throw new RunNotFoundError('there are no recorded runs yet')
      return row.run_id
    }
    const exact = this.find(spec)
    if (exact !== null) return exact
    const prefixes = spec.startsWith('run-') ? [spec] : [spec, `run-${spec}`]
    // '~' sorts after every character a run id may hold
    const byPrefix = this.db.prepare("SELECT run_id FROM runs WHERE run_id >= ? AND run_id < ? || '~' LIMIT 2")
    const ids = new Set(prefixes.flatMap((p) => (byPrefix.all(p, p) as Array<{ run_id: string }>).map((r) => r.run_id)))
    if (ids.size === 0) throw new RunNotFoundError(`no run ${spec} (see 'forkpoint runs')`, { spec })
    if (ids.size > 1) throw new UsageError(`run id ${spec} is ambiguous; give more characters`, { spec })
    return [...ids][0]!
  }

  /** How this store came by the run of exactly this id: recorded by its own `run --record`, imported, or null when it holds none. */
  origin(runId: string): 'recorded' | 'imported' | null {
    const row = this.db.prepare('SELECT recorded_here FROM runs WHERE run_id = ?').get(runId) as { recorded_here: number } | undefined
    return row === undefined ? null : row.recorded_here === 1 ? 'recorded' : 'imported'
  }

  /** The run stored under exactly this id, or null. */
  find(runId: string): string | null {
    const row = this.db.prepare('SELECT run_id FROM runs WHERE run_id = ?').get(runId) as { run_id: string } | undefined
    return row?.run_id ?? null
  }

  /**
   * Forget a run: its row and its `refs/runs/` ref. Its object stays until gc finds no
   * ref and no unexpired reflog entry naming it (`gc --prune=now` takes it at once).
   * Returns the run id.
   */
  async remove(spec: string): Promise<string> {
    const runId = this.resolve(spec)
    if (this.store) await deleteRef(this.store, runRefName(runId))
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM run_steps WHERE run_id = ?').run(runId)
      this.db.prepare('DELETE FROM runs WHERE run_id = ?').run(runId)
    })()
    return runId
  }

  async get(spec: string): Promise<Run> {
    const runId = this.resolve(spec)
    const row = this.db.prepare('SELECT digest, body FROM runs WHERE run_id = ?').get(runId) as { digest: string | null; body: Buffer | null }
    if (row.body) return parseRun(row.body, `run ${runId}`)
    if (!this.store) throw new RunArtifactError(`run ${runId} has no stored body`)
    const digest = isDigest(row.digest) ? row.digest : await readRef(this.store, runRefName(runId))
    if (!digest) throw new RunArtifactError(`run ${runId} is indexed but its object is gone (was the store pruned?)`, { runId })
    return parseRun(await this.store.readBlob(digest), `run ${runId}`)
  }
}

function summary(r: Row): RunSummary {
  return {
    runId: r.run_id,
    digest: isDigest(r.digest) ? r.digest : null,
    entrypoint: r.entrypoint,
    status: r.status,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    steps: r.steps,
    llmCalls: r.llm_calls,
    toolCalls: r.tool_calls,
    errors: r.errors,
    parent: r.parent,
    redaction: r.redaction,
  }
}

/**
 * Two processes opening a new `runs.db` at once can each hold a read lock while asking for the
 * write lock that switching to WAL needs; SQLite then answers SQLITE_BUSY at once instead of
 * waiting (it would deadlock), so the open is retried until the other one is done: for a
 * minute, plus the busy timeout of the last try.
 */
function openDb(path: string): Database.Database {
  const deadline = Date.now() + OPEN_PATIENCE_MS
  for (let attempt = 0; ; attempt++) {
    try {
      return openDbOnce(path)
    } catch (err) {
      const busy = String((err as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY')
      if (!busy) throw new RunArtifactError(`cannot open the run index ${path}: ${(err as Error).message}`, { path }, { cause: err })
      if (Date.now() > deadline) throw new LockTimeoutError(`the run index ${path} stayed locked by another process for a minute`, { path }, { cause: err })
      sleepSync(Math.min(5 * 2 ** attempt, 200) * (0.5 + Math.random()))
    }
  }
}

const OPEN_PATIENCE_MS = 60_000

function openDbOnce(path: string): Database.Database {
  const SQLite = requirePackage('better-sqlite3') as typeof Database
  const db = new SQLite(path, { timeout: 10_000 })
  try {
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL')
    db.exec(SCHEMA)
    addRecordedHere(db)
    return db
  } catch (err) {
    db.close()
    throw err
  }
}

/** A store's run index is a regular file or none: SQLite follows a planted symlink and writes its tables into whatever it names, and waits on a FIFO. */
function assertRegularOrAbsent(path: string): void {
  const st = lstatSync(path, { throwIfNoEntry: false })
  if (st && !st.isFile()) throw new RunArtifactError(`the run index ${path} is not a regular file: refusing to open it`, { path })
}

function openDbReadOnly(path: string): Database.Database {
  const SQLite = requirePackage('better-sqlite3') as typeof Database
  if (!existsSync(path)) {
    const empty = new SQLite(':memory:')
    empty.exec(SCHEMA)
    empty.pragma('query_only = ON')
    return empty
  }
  let db: Database.Database | null = null
  try {
    db = new SQLite(path, { readonly: true, fileMustExist: true, timeout: 10_000 })
    db.pragma('schema_version') // a file that is no database fails here, not at the first query
    return db
  } catch (err) {
    db?.close()
    throw new RunArtifactError(`cannot open the run index ${path}: ${(err as Error).message}`, { path }, { cause: err })
  }
}

/** An index made before runs were marked: every run in it counts as imported (its command runs only when given again). */
function addRecordedHere(db: Database.Database): void {
  const columns = db.prepare('PRAGMA table_info(runs)').all() as Array<{ name: string }>
  if (!columns.some((c) => c.name === 'recorded_here')) db.exec('ALTER TABLE runs ADD COLUMN recorded_here INTEGER NOT NULL DEFAULT 0')
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}
