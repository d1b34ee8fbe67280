import type { ForkpointError } from '../errors/index.js'

/** The CLI commands library messages name, and the operation a service client calls instead. */
const COMMANDS: Array<[RegExp, (...groups: string[]) => string]> = [
  [/'forkpoint merge --continue( --keep-leftovers)?'/g, (keep) => (keep ? 'merge_continue with keepLeftovers' : 'merge_continue')],
  [/'forkpoint merge --abort'/g, () => 'merge_abort'],
  [/'forkpoint commit (\S+) --continue( --keep-leftovers)?'/g, (name, keep) => `commit_continue ${JSON.stringify({ name, ...(keep ? { keepLeftovers: true } : {}) })}`],
  [/'forkpoint commit (\S+) --abort'/g, (name) => `commit_abort ${JSON.stringify({ name })}`],
]

/** A message as a client of the service (HTTP, MCP) reads it: the next steps it names are operations, not CLI commands it does not have. */
export function inOperationWords(message: string): string {
  return COMMANDS.reduce(
    (text, [pattern, operation]) => text.replace(pattern, (_, ...groups: unknown[]) => operation(...groups.map((g) => (typeof g === 'string' ? g : '')))),
    message,
  )
}

/** An error's JSON (`toJSON()`) with its message in operation words. */
export function serviceErrorJson(err: ForkpointError<object>): ReturnType<ForkpointError<object>['toJSON']> {
  const json = err.toJSON()
  return { error: { ...json.error, message: inOperationWords(json.error.message) } }
}
