import { UsageError } from '../errors/index.js'
import { describeValue } from '../util/describeValue.js'

/** What a ref component may hold as it is: the store's ref rule, less a leading `_`, which marks the hex form. */
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
/** A ref is a file name: 255 bytes at most, and the hex form doubles a name's length. */
const MAX_PLAIN = 200
const MAX_HEX_BYTES = 100

/**
 * Any name from outside (a LangGraph thread id, a Claude Code session id) as one ref
 * component: as it is when a ref name can spell it, else `_<its UTF-8 in hex>` (`user/42`,
 * spaces, non-ASCII, `..`), so two names never share a ref and none leaves its folder.
 * @throws {UsageError} a name that is not a string, is empty, or is too long for a file name; `what` names it
 */
export function refComponent(name: unknown, what: string): string {
  if (typeof name !== 'string' || name === '') throw new UsageError(`${what} must be a non-empty string (got ${describeValue(name)})`, { field: what })
  // a lone surrogate has no UTF-8: '\ud800' and '\udc00' would both be written as U+FFFD and share a ref
  if (Buffer.from(name, 'utf8').toString('utf8') !== name)
    throw new UsageError(`${what} ${JSON.stringify(name)} holds a lone UTF-16 surrogate; give it as well-formed text`, { field: what })
  if (PLAIN.test(name) && name.length <= MAX_PLAIN && !name.endsWith('.lock') && !name.includes('..')) return name
  const bytes = Buffer.from(name, 'utf8')
  if (bytes.length > MAX_HEX_BYTES) {
    throw new UsageError(
      `${what} ${JSON.stringify(name.slice(0, 40))}… is ${bytes.length} bytes; forkpoint keeps one of letters, digits, '.', '_' and '-' up to ${MAX_PLAIN} characters, any other up to ${MAX_HEX_BYTES} bytes`,
      { field: what },
    )
  }
  return `_${bytes.toString('hex')}`
}

/** The name `refComponent` made a component of. */
export function nameOfRefComponent(component: string): string {
  return component.startsWith('_') ? Buffer.from(component.slice(1), 'hex').toString('utf8') : component
}
