import { ExitCode, ForkpointError, type NoData } from './ForkpointError.js'

/** The base of every error an exploration pattern throws on purpose (a candidate's own failure is a result, never one of these). */
export abstract class PatternError<Data extends object = NoData> extends ForkpointError<Data> {}

/** The pattern's signal fired: every candidate was cancelled and every branch aborted. `data.results` holds what had finished (`CandidateResult`s). */
export class PatternCancelledError extends PatternError<{ results: readonly unknown[] }> {
  readonly exitCode = ExitCode.difference
}

/** A callback of the pattern itself (expand, critique, judge) threw or returned something unusable. `data.callback` names it. */
export class PatternCallbackError extends PatternError<{ callback: string }> {
  readonly exitCode = ExitCode.difference
}
