import dns from 'node:dns'
import net from 'node:net'
import { OfflineViolationError } from '../../errors/index.js'

/**
 * Refuse every network connection and DNS lookup this process attempts (unix sockets,
 * which are files, stay allowed). `onViolation` hears each attempt before it fails. This
 * is the in-process half of offline replay; the child's network namespace is the other.
 */
export function installOfflineGuard(onViolation: (err: OfflineViolationError) => void): void {
  const refuse = (target: string): OfflineViolationError => {
    const err = new OfflineViolationError(`offline: network access to ${target} is blocked during replay`, { target })
    onViolation(err)
    return err
  }
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with connect.apply(this, args)
  const connect = net.Socket.prototype.connect as (...args: unknown[]) => net.Socket
  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const first = args[0]
    const options = (Array.isArray(first) ? first[0] : first) as { path?: string; host?: string; port?: number } | string | number
    const isPath = (typeof options === 'string' && !/^\d+$/.test(options)) || (typeof options === 'object' && options !== null && typeof options.path === 'string')
    if (isPath) return connect.apply(this, args)
    const target = typeof options === 'object' && options !== null ? `${options.host ?? 'localhost'}:${options.port}` : `${String(args[1] ?? 'localhost')}:${String(options)}`
    const err = refuse(target)
    process.nextTick(() => this.destroy(err))
    return this
  }

  const blockedLookup = (hostname: string, ...rest: unknown[]) => {
    const cb = rest.at(-1) as ((err: Error) => void) | undefined
    const err = refuse(`${hostname} (dns)`)
    if (typeof cb === 'function') process.nextTick(() => cb(err))
  }
  dns.lookup = blockedLookup as unknown as typeof dns.lookup
  for (const name of ['resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveCname', 'resolveMx', 'resolveTxt', 'resolveSrv', 'reverse'] as const) {
    ;(dns as unknown as Record<string, unknown>)[name] = blockedLookup
  }
  const rejectLookup = async (hostname: string) => {
    throw refuse(`${hostname} (dns)`)
  }
  dns.promises.lookup = rejectLookup
  for (const name of ['resolve', 'resolve4', 'resolve6', 'resolveAny', 'reverse'] as const) {
    ;(dns.promises as unknown as Record<string, unknown>)[name] = rejectLookup
  }
}
