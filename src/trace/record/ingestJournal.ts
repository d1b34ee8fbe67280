import { rmSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { openStore } from '../../store/findStore.js'
import { assembleRun, type RunHeader } from './assembleRun.js'
import { readJournal } from './journal.js'
import type { Run } from '../../objects/Run.js'
import { RunStore } from '../core/RunStore.js'
import { counted } from '../../util/plural.js'

export type IngestHeader = Omit<RunHeader, 'startedAt' | 'endedAt'> & { startedAt: string; endedAt: string }

/** Turn a finished journal into a stored run (in `store`, else the store found from `cwd`), and remove the journal. */
export async function ingestJournal({
  journal,
  header,
  cwd = process.cwd(),
  store: named,
}: {
  journal: string
  header: IngestHeader
  cwd?: string
  store?: string | undefined
}): Promise<Run> {
  const run = assembleRun(readJournal(journal), { ...header, startedAt: new Date(header.startedAt), endedAt: new Date(header.endedAt) })
  const { store } = await openStore({ dir: cwd, store: named })
  const runs = RunStore.open({ store })
  try {
    await runs.save(run)
  } finally {
    runs.close()
  }
  rmSync(journal, { force: true })
  return run
}

// `node ingestJournal.js JOURNAL HEADER_JSON [STORE]`: what `node --import forkpoint/register` runs at exit when no forkpoint parent is collecting.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [journal, header, store] = process.argv.slice(2)
  try {
    const run = await ingestJournal({ journal: journal!, header: JSON.parse(header!) as IngestHeader, store })
    process.stderr.write(`forkpoint: recorded ${run.runId} (${counted(run.steps.length, 'step')})\n`)
  } catch (err) {
    process.stderr.write(`forkpoint: run not saved (${(err as Error).message}); its journal is ${journal}\n`)
    process.exitCode = 1
  }
}
