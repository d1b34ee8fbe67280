import { ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** A function candidate given to a queue runner: an in-process function cannot travel to another machine; only command candidates fan out. `data.index` names it. */
export class FunctionCandidateError extends UsageError<{ index: number }> {}

/** The queue's Redis cannot be reached, or refused us (`data.queue`: the URL, password left out). */
export class QueueUnreachableError extends ForkpointError<{ queue: string }> {
  readonly exitCode = ExitCode.usage
}

/** A worker could not pull a job's base image from, or push its result to, the registry (`data.registry`, `data.worker`). */
export class WorkerRegistryError extends ForkpointError<{ registry: string; worker: string }> {
  readonly exitCode = ExitCode.usage
}

/** A queue job (or a job's result) a worker or submitter refuses: unsigned, signed with another key, or a field out of its schema (`data.job`: the job's id, `data.reason`). Nothing of it ran. */
export class InvalidJobError extends ForkpointError<{ job: string; reason: string }> {
  readonly exitCode = ExitCode.corrupt
}
