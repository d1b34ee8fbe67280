import { isIP } from 'node:net'
import { UsageError } from '../errors/index.js'
import type { Store } from '../store/Store.js'
import { STORE_SERVICE_SOCKET } from './serviceNames.js'

/** Where the service listens: a Unix socket (the default, in the store), or TCP. */
export type ServiceAddress = { kind: 'unix'; path: string } | { kind: 'tcp'; host: string; port: number; loopback: boolean }

export function defaultSocket(store: Store): string {
  return store.path(STORE_SERVICE_SOCKET)
}

/**
 * `unix:PATH` or a path; `HOST:PORT` or `[IPv6]:PORT` for TCP.
 * @throws {UsageError} anything else
 */
export function parseListen(spec: string): ServiceAddress {
  if (spec.startsWith('unix:')) return { kind: 'unix', path: spec.slice(5) }
  if (spec.startsWith('/') || spec.startsWith('.')) return { kind: 'unix', path: spec }
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(spec)
  const host = m?.[1] ?? m?.[2]
  const port = Number(m?.[3])
  if (!host || !Number.isInteger(port) || port > 65535)
    throw new UsageError(`--listen takes unix:PATH, HOST:PORT or [IPv6]:PORT (got ${JSON.stringify(spec)})`, { option: '--listen', value: spec })
  return { kind: 'tcp', host, port, loopback: isLoopback(host) }
}

function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true
  return isIP(host) === 4 && host.startsWith('127.')
}
