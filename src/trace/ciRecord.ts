import { basename, resolve } from 'node:path'
import { atomicWrite } from '../util/atomicWrite.js'
import { entrypointCommand } from './entrypointCommand.js'
import { normalizeRun } from './normalizeRun.js'
import { recordCommand, type RecordCommandArgs, type RecordResult } from './recordCommand.js'
import { runArtifactText } from './runArtifact.js'

export interface CiRecordArgs extends Omit<RecordCommandArgs, 'command' | 'out' | 'entrypoint'> {
  /** The agent script (`agent.js`, `agent.ts`, `agent.py`, or an executable). */
  entrypoint: string
  /** Where the golden artifact goes. */
  out: string
  /** Run this instead of inferring the command from the entrypoint. */
  command?: string[]
}

/** Record the entrypoint and write its normalised artifact: the golden file `ci check` compares against. */
export async function ciRecord({ entrypoint, out, command, ...rest }: CiRecordArgs): Promise<RecordResult & { artifact: string }> {
  const cwd = resolve(rest.cwd ?? process.cwd())
  const result = await recordCommand({ ...rest, cwd, command: command ?? entrypointCommand(entrypoint, cwd), entrypoint: basename(entrypoint) })
  const artifact = resolve(cwd, out)
  await atomicWrite(artifact, runArtifactText(normalizeRun(result.run)))
  return { ...result, artifact }
}
