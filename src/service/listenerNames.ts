import { networkInterfaces } from 'node:os'

/**
 * The `Host` values a TCP listener answers to: its loopback names and the address it was
 * given, each with its port; a wildcard address (`0.0.0.0`, `::`) adds every address of
 * this machine. Any other Host is a name a web page made point here (DNS rebinding).
 */
export function listenerHosts(host: string, port: number): Set<string> {
  const names = ['127.0.0.1', 'localhost', '::1', host]
  if (host === '0.0.0.0' || host === '::') for (const nic of Object.values(networkInterfaces()).flat()) if (nic) names.push(nic.address)
  return new Set(names.map((name) => `${name.includes(':') ? `[${name}]` : name}:${port}`))
}

/** The origins of pages this listener serves itself (the web view): `http://` and one of its own names. */
export function listenerOrigins(hosts: Set<string>): Set<string> {
  return new Set([...hosts].map((host) => `http://${host}`))
}
