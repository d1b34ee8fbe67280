import { Redis } from 'ioredis'
import { QueueUnreachableError, UsageError } from '../errors/index.js'
import { messageOf } from '../patterns/runCandidates.js'

/** Where the queue lives, parsed from `redis://[:PASSWORD@]HOST[:PORT][/DB]`. */
export interface QueueLocation {
  host: string
  port: number
  db: number
  password?: string
  /** The URL without its password, for messages. */
  display: string
}

/** Parse a queue URL. @throws {UsageError} not a redis:// URL */
export function parseQueueUrl(url: string): QueueLocation {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`--queue ${JSON.stringify(url)} is not a URL: give redis://HOST:PORT`, { option: 'queue', value: url })
  }
  if (parsed.protocol !== 'redis:' || parsed.hostname === '')
    throw new UsageError(`--queue ${JSON.stringify(url)} is not redis://HOST[:PORT][/DB]`, { option: 'queue', value: url })
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0
  if (!Number.isSafeInteger(db) || db < 0) throw new UsageError(`--queue ${JSON.stringify(url)}: the database number must be a whole number`, { option: 'queue', value: url })
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1')
  const port = parsed.port === '' ? 6379 : Number(parsed.port)
  return { host, port, db, ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}), display: `redis://${parsed.host}${db ? `/${db}` : ''}` }
}

/** ioredis options for BullMQ (which needs `maxRetriesPerRequest: null` for its blocking calls). */
export function connectionOptions(at: QueueLocation): { host: string; port: number; db: number; password?: string; maxRetriesPerRequest: null } {
  return { host: at.host, port: at.port, db: at.db, ...(at.password ? { password: at.password } : {}), maxRetriesPerRequest: null }
}

/**
 * A plain Redis connection, checked with a PING: a wrong address is a clear error at once
 * (ioredis would otherwise retry for ever). Used for pub/sub and the cancellation keys.
 * @throws {QueueUnreachableError}
 */
export async function connectRedis(at: QueueLocation): Promise<Redis> {
  const redis = new Redis({ ...connectionOptions(at), lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: (times) => (times > 3 ? null : 200 * times) })
  redis.on('error', () => undefined) // reported by the calls that fail
  try {
    await redis.connect()
    await redis.ping()
  } catch (err) {
    redis.disconnect()
    throw new QueueUnreachableError(`cannot reach the queue at ${at.display}: ${messageOf(err)}`, { queue: at.display }, { cause: err })
  }
  redis.options.retryStrategy = (times) => Math.min(1000, 50 * times) // once up, ride out blips
  return redis
}
