import type { Redis } from 'ioredis'
import { QueueUnreachableError, UsageError } from '../errors/index.js'
import { messageOf } from '../patterns/runCandidates.js'
import { loadOptional } from '../util/optionalPackage.js'

/** Where the queue lives, parsed from `redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB]`. */
export interface QueueLocation {
  host: string
  port: number
  db: number
  /** A Redis ACL user (AUTH user password); none: the default user. */
  username?: string
  password?: string
  /** `rediss://`: TLS, checked against `ca` (PEM) or the system's CAs. */
  tls: { ca?: string } | null
  /** The URL without its password, for messages. */
  display: string
}

/** What a queue URL leaves out: a password kept off the command line, a CA to check a `rediss://` server with. */
export interface QueueSecrets {
  password?: string | undefined
  ca?: string | undefined
}

/** Parse a queue URL; a password in `secrets` is used when the URL has none. @throws {UsageError} not a redis:// or rediss:// URL */
export function parseQueueUrl(url: string, secrets: QueueSecrets = {}): QueueLocation {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError('--queue is not a URL: give redis://HOST:PORT or rediss://HOST:PORT', { option: 'queue' })
  }
  const shown = displayUrl(parsed)
  if ((parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || parsed.hostname === '')
    throw new UsageError(`--queue ${shown} is not redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB]`, { option: 'queue', value: shown })
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0
  if (!Number.isSafeInteger(db) || db < 0) throw new UsageError(`--queue ${shown}: the database number must be a whole number`, { option: 'queue', value: shown })
  const password = parsed.password ? decodeURIComponent(parsed.password) : secrets.password
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(password ? { password } : {}),
    tls: parsed.protocol === 'rediss:' ? (secrets.ca ? { ca: secrets.ca } : {}) : null,
    display: shown,
  }
}

/** A queue URL as messages show it: the user, never the password. */
function displayUrl(parsed: URL): string {
  const user = parsed.username ? `${parsed.username}@` : ''
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname.length > 1 ? parsed.pathname : ''}`
}

/** ioredis options for BullMQ (which needs `maxRetriesPerRequest: null` for its blocking calls). */
export function connectionOptions(at: QueueLocation): {
  host: string
  port: number
  db: number
  username?: string
  password?: string
  tls?: { ca?: string }
  maxRetriesPerRequest: null
} {
  return {
    host: at.host,
    port: at.port,
    db: at.db,
    ...(at.username ? { username: at.username } : {}),
    ...(at.password ? { password: at.password } : {}),
    ...(at.tls ? { tls: at.tls.ca ? { ca: at.tls.ca } : {} } : {}),
    maxRetriesPerRequest: null,
  }
}

/**
 * A plain Redis connection, checked with a PING: a wrong address is a clear error at once
 * (ioredis would otherwise retry for ever). Used for pub/sub and the cancellation keys.
 * @throws {QueueUnreachableError}
 * @throws {MissingPackageError} ioredis is not installed
 */
export async function connectRedis(at: QueueLocation): Promise<Redis> {
  const { Redis } = await loadOptional('queue', () => import('ioredis'))
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
