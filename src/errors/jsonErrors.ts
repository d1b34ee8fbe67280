import { CorruptDataError } from './ForkpointError.js'

/** JSON nested deeper than forkpoint walks (`MAX_JSON_DEPTH`, `data.limit`): refused as invalid data rather than overflowing the stack. */
export class JsonTooDeepError extends CorruptDataError<{ limit: number }> {}
