import type { ArtifactReport } from './validateArtifact.js'
import { printable } from '../core/printable.js'
import { shellQuote } from '../core/shellQuote.js'
import { counted } from '../../util/plural.js'

/** The human report of `ci replay --artifact`: what the file is, and what replaying it would run. */
export function describeArtifact(x: ArtifactReport): string {
  const head = `${x.artifact}: valid run ${x.runId}, ${counted(x.steps, 'step')}, schema v${x.schemaVersion}${x.migratedFrom !== null ? ` (migrated from v${x.migratedFrom})` : ''}`
  if (!x.replayable) return printable(`${head}, not replayable (content-redacted)`)
  const runs = x.recordedCommand
    ? `replaying it would run its recorded command ${shellQuote(x.recordedCommand)}: give your own after -- or pass --trust-command`
    : 'it records no command: give one after --'
  return printable(`${head}, replayable; ${runs}`)
}
