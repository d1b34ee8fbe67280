import { UsageError } from './ForkpointError.js'

/** A request to the service names a file or a remote the service does not give out (`data.path` or `data.remote`): outside the workspace, in the store, or not allowed when it started. */
export class RequestRefusedError extends UsageError<{ path?: string; remote?: string }> {}
