import { resolve } from 'node:path'
import { RunArtifactError, RunNotFoundError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { readRef } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import { isRunFile } from '../trace/core/loadRun.js'
import { readRunArtifact } from '../trace/core/readRunArtifact.js'
import type { Run } from '../objects/Run.js'
import { RunStore } from '../trace/core/RunStore.js'
import { runRefName } from '../trace/core/runIds.js'
import { transcriptToRun } from '../trace/core/transcript.js'
import { MAX_JSON_FILE_BYTES } from '../util/jsonDepth.js'
import { readCappedFile } from '../util/readCappedFile.js'
import type { Snapshot } from '../objects/Snapshot.js'

/**
 * The `run` object a `--trace` names, stored and indexed like any recorded run (so
 * `forkpoint runs` lists it): a chat transcript (`*.jsonl`), a run artifact file
 * (validated as every reader of one validates it), or a run of the store by id, unique
 * prefix or `latest`. A transcript is scrubbed of `env`'s secret values.
 */
export async function traceLayer({ store, spec, cwd = process.cwd(), env }: { store: Store; spec: string; cwd?: string; env: NodeJS.ProcessEnv }): Promise<Digest> {
  const path = resolve(cwd, spec)
  if (spec.endsWith('.jsonl')) return saveRun(store, transcriptToRun(readInput(path), path, { env }))
  if (isRunFile(spec, cwd)) return saveRun(store, readRunArtifact(path).run)
  return withRuns(store, async (runs) => {
    const runId = runs.resolve(spec)
    const digest = await readRef(store, runRefName(runId))
    if (!digest) throw new RunNotFoundError(`run ${runId} is indexed but its object is gone (was the store pruned?)`, { runId })
    return digest
  })
}

/**
 * The run recorded (`forkpoint run --record`) with this store since the last snapshot:
 * the newest run that ended after HEAD was made and is not HEAD's trace already; none
 * when there is none. Imported transcripts do not count: they were attached when given.
 */
export async function runSinceSnapshot(store: Store, head: Snapshot | null): Promise<Digest | null> {
  return withRuns(store, async (runs) => {
    const [newest] = runs.list({ limit: 1 })
    if (!newest?.digest || newest.status === 'running') return null
    if (head && (Date.parse(newest.endedAt) <= Date.parse(head.meta.createdAt) || head.trace === newest.digest)) return null
    return newest.entrypoint.startsWith('transcript ') ? null : newest.digest
  })
}

async function saveRun(store: Store, run: Run): Promise<Digest> {
  return withRuns(store, async (runs) => (await runs.save(run))!)
}

async function withRuns<T>(store: Store, use: (runs: RunStore) => Promise<T>): Promise<T> {
  const runs = RunStore.open({ store })
  try {
    return await use(runs)
  } finally {
    runs.close()
  }
}

function readInput(path: string): Buffer {
  return readCappedFile(path, MAX_JSON_FILE_BYTES, {
    missing: () => new RunNotFoundError(`no transcript at ${path}`, { path }),
    notRegular: () => new RunArtifactError(`${path} is not a regular file (a symlink, FIFO or device): a transcript is read only from a regular file`, { path }),
    tooLarge: (size) => new RunArtifactError(`${path} is ${size} bytes, over the ${MAX_JSON_FILE_BYTES}-byte limit of a transcript`, { path, limit: MAX_JSON_FILE_BYTES }),
  })
}
