import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { PatternCancelledError } from '../errors/index.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import type { Store } from '../store/Store.js'
import { atomicWrite } from '../util/atomicWrite.js'
import { readStateOrNull } from '../store/readStateFile.js'
import { readdirOrEmpty } from '../branch/commit/samePath.js'
import type { CandidateResult, CandidateStatus, Match, Outcome, PatternName } from './types.js'

/** How a pattern's run ended. */
export type ExplorationStatus = 'committed' | 'no-winner' | 'cancelled' | 'failed'

/** One pattern run as the store keeps it (`<store>/explorations/<id>.json`): its candidates without their values, and the winner. */
export interface Exploration {
  kind: 'exploration'
  schemaVersion: 1
  id: string
  pattern: PatternName
  status: ExplorationStatus
  startedAt: string
  durationMs: number
  winner: number | null
  error: string | null
  candidates: Array<{ index: number; status: CandidateStatus; score: number | null; durationMs: number; error: string | null; depth: number | null; parent: number | null }>
  matches: Match[]
}

const dir = (store: Store) => store.path('explorations')
let recorded = 0

/** Keep what became of a pattern's run; ids sort by start time, as run ids do. */
export async function recordExploration(
  store: Store,
  { pattern, started, outcome, error }: { pattern: PatternName; started: Date; outcome: Pick<Outcome, 'committed' | 'winner' | 'results' | 'matches'> | null; error: Error | null },
): Promise<void> {
  const results: CandidateResult[] = outcome?.results ?? []
  // the start's milliseconds, then this process's count (runs started in one millisecond keep their order), then chance (other processes')
  const id = `${started.getTime().toString(16).padStart(12, '0')}${(recorded++ % 0x10000).toString(16).padStart(4, '0')}${randomBytes(2).toString('hex')}`
  const record: Exploration = {
    kind: 'exploration',
    schemaVersion: 1,
    id,
    pattern,
    status: error ? (error instanceof PatternCancelledError ? 'cancelled' : 'failed') : outcome?.committed ? 'committed' : 'no-winner',
    startedAt: started.toISOString(),
    durationMs: Date.now() - started.getTime(),
    winner: outcome?.winner ?? null,
    error: error?.message ?? null,
    candidates: results.map((r) => ({
      index: r.index,
      status: r.status,
      score: r.score,
      durationMs: r.durationMs,
      error: r.error ?? null,
      depth: r.depth ?? null,
      parent: r.parent ?? null,
    })),
    matches: outcome?.matches ?? [],
  }
  await fs.mkdir(dir(store), { recursive: true })
  await atomicWrite(join(dir(store), `${id}.json`), JSON.stringify(record))
}

/** The store's recorded explorations (speculate, explore, the patterns), newest first. */
export async function listExplorations({ limit = 100, ...locator }: StoreLocator & { limit?: number } = {}): Promise<Exploration[]> {
  const { store } = await openStore(locator)
  const names = (await readdirOrEmpty(dir(store))).filter((n) => /^[0-9a-f]{20}\.json$/.test(n))
  const newest = names.sort().reverse().slice(0, limit)
  const records = newest.map((n) => readStateOrNull(join(dir(store), n)))
  return records.filter((r): r is Buffer => r !== null).map((bytes) => JSON.parse(bytes.toString('utf8')) as Exploration)
}
