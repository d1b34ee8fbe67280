import { UsageError } from '../../errors/index.js'

export const THREAD_REFS = 'refs/threads/'

/** What a ref component may hold as it is (the store's ref rule, less a leading `_`, which marks the hex form). */
const PLAIN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
/** A ref is a file name: 255 bytes at most, and the hex form doubles an id's length. */
const MAX_PLAIN = 200
const MAX_HEX_BYTES = 100

/**
 * The ref that holds a thread's latest image: `refs/threads/<thread id>`, or, for an id a
 * ref name cannot spell (`user/42`, spaces, non-ASCII), `refs/threads/_<its UTF-8 in hex>`.
 * @throws {UsageError} an id that is not a string, is empty, or is too long for a file name
 */
export function threadRef(threadId: unknown): string {
  if (typeof threadId !== 'string' || threadId === '') {
    throw new UsageError(`a LangGraph thread_id must be a non-empty string (got ${describe(threadId)}); pass it as config.configurable.thread_id`, { field: 'thread_id' })
  }
  if (PLAIN.test(threadId) && threadId.length <= MAX_PLAIN && !threadId.endsWith('.lock') && !threadId.includes('..')) return THREAD_REFS + threadId
  const bytes = Buffer.from(threadId, 'utf8')
  if (bytes.length > MAX_HEX_BYTES) {
    throw new UsageError(
      `thread_id ${JSON.stringify(threadId.slice(0, 40))}… is ${bytes.length} bytes; forkpoint keeps a thread id of letters, digits, '.', '_' and '-' up to ${MAX_PLAIN} characters, any other up to ${MAX_HEX_BYTES} bytes`,
      {
        field: 'thread_id',
      },
    )
  }
  return `${THREAD_REFS}_${bytes.toString('hex')}`
}

/** The thread id a ref under `refs/threads/` holds the image of. */
export function threadIdOf(ref: string): string {
  const name = ref.slice(THREAD_REFS.length)
  return name.startsWith('_') ? Buffer.from(name.slice(1), 'hex').toString('utf8') : name
}

export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? JSON.stringify(value) : typeof value
}
