import { resolve } from 'node:path'
import { readRunArtifact } from '../core/readRunArtifact.js'
import { recordedCommandOf } from '../replay/recordedCommand.js'
import { RUN_SCHEMA_VERSION } from '../../objects/Run.js'

export interface ArtifactReport {
  artifact: string
  runId: string
  schemaVersion: number
  /** The version it was written in, when it was migrated on read. */
  migratedFrom: number | null
  steps: number
  redaction: string
  replayable: boolean
  /** What `forkpoint replay` of this file would run with `--trust-command` (without it, replay needs the command after --). */
  recordedCommand: string[] | null
}

/** Check a run artifact against the schema (RunArtifactError, exit 5, naming the first problem). */
export function validateArtifact({ artifact, dir = process.cwd() }: { artifact: string; dir?: string }): ArtifactReport {
  const path = resolve(dir, artifact)
  const { run, writtenVersion: written } = readRunArtifact(path)
  return {
    artifact: path,
    runId: run.runId,
    schemaVersion: run.schemaVersion,
    migratedFrom: typeof written === 'number' && written !== RUN_SCHEMA_VERSION ? written : null,
    steps: run.steps.length,
    redaction: run.redaction,
    replayable: run.redaction !== 'content',
    recordedCommand: recordedCommandOf(run),
  }
}
