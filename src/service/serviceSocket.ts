import { lstatSync } from 'node:fs'
import { join } from 'node:path'
import { STORE_SERVICE_SOCKET } from './serviceNames.js'

/**
 * The socket of the store's running service, when one of this user's is there; null
 * otherwise. A link (a repository someone cloned may carry one) or a socket another user
 * bound would hand them what a client sends (a hook's tool calls, the environment's
 * secrets) and let them answer for the service (a scan of their choosing).
 */
export function serviceSocket(storeDir: string): string | null {
  const path = join(storeDir, STORE_SERVICE_SOCKET)
  const st = lstatSync(path, { throwIfNoEntry: false })
  return st !== undefined && st.isSocket() && st.uid === process.geteuid?.() ? path : null
}
