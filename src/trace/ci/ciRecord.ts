import { basename, resolve } from 'node:path'
import { AgentFailedError } from '../../errors/index.js'
import { entrypointCommand } from './entrypointCommand.js'
import { normalizeRun } from './normalizeRun.js'
import { printable } from '../core/printable.js'
import { recordCommand, type RecordCommandArgs, type RecordResult } from '../record/recordCommand.js'
import type { StepError } from '../../objects/Run.js'
import { writeRunArtifact } from '../core/runArtifact.js'

export interface CiRecordArgs extends Omit<RecordCommandArgs, 'command' | 'out' | 'entrypoint'> {
  /** The agent script (`agent.js`, `agent.ts`, `agent.py`, or an executable). */
  entrypoint: string
  /** Where the golden artifact goes. */
  out: string
  /** Run this instead of inferring the command from the entrypoint. */
  command?: string[]
}

/** Record the entrypoint and write its normalised artifact: the golden file `ci check` compares against. An agent that fails writes none (AgentFailedError, exit 3). */
export async function ciRecord({ entrypoint, out, command, ...rest }: CiRecordArgs): Promise<RecordResult & { artifact: string }> {
  const cwd = resolve(rest.dir ?? process.cwd())
  const result = await recordCommand({ ...rest, dir: cwd, command: command ?? entrypointCommand(entrypoint, cwd), entrypoint: basename(entrypoint) })
  if (result.exitCode !== 0) throw agentFailed(entrypoint, result)
  const artifact = resolve(cwd, out)
  await writeRunArtifact(artifact, normalizeRun(result.run))
  return { ...result, artifact }
}

function agentFailed(entrypoint: string, result: RecordResult): AgentFailedError {
  const failed = result.run.steps.find((s) => s.error !== undefined && typeof s.error === 'object')
  const why = failed ? `; its first failed step is ${failed.idx} "${printable(failed.name)}": ${printable((failed.error as StepError).message)}` : ''
  return new AgentFailedError(`the agent ${entrypoint} exited ${result.exitCode} while being recorded${why}; no golden run was written (the failed run is ${result.runId})`, {
    exitCode: result.exitCode,
    runId: result.runId,
  })
}
