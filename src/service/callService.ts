import { request } from 'node:http'
import * as errors from '../errors/index.js'
import { ForkpointError, InternalError } from '../errors/index.js'
import { type StoreLocator, locateStore } from '../store/locateStore.js'
import { WORKSPACE_HEADER } from './serviceNames.js'
import { serviceSocket } from './serviceSocket.js'
import { readServiceToken } from './serviceToken.js'

/**
 * The result of an operation as the store's running service (`forkpoint serve`) gives it,
 * or null when no service of this user's answers on the store's socket (none started, one
 * that died, a link or another user's socket there)
 * or the one that answers keeps another workspace than the caller's: the caller runs the
 * operation itself. How the CLI reaches the warm service; the store's service token
 * (`service-token`) goes along when there is one.
 * @throws {ForkpointError} the operation failed in the service: the same class of error, message and data, as running it here would have thrown
 */
export async function callService(where: StoreLocator, operation: string, args: object): Promise<object | null> {
  const location = locateStore(where)
  const socketPath = location && serviceSocket(location.storeDir)
  if (!socketPath) return null
  const token = await readServiceToken(location.storeDir)
  const answer = await new Promise<{ status: number; body: string } | null>((resolve, reject) => {
    const headers = { 'content-type': 'application/json', [WORKSPACE_HEADER]: encodeURIComponent(location.workspace), ...(token ? { authorization: `Bearer ${token}` } : {}) }
    const req = request({ socketPath, method: 'POST', path: `/v1/${operation}`, headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      res.on('error', reject)
    })
    // a socket no service listens on (it died): not an error, the operation runs here instead
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? resolve(null) : reject(err)))
    req.end(JSON.stringify(args))
  })
  if (answer === null || answer.status === 421) return null // 421: the service keeps another workspace of this store
  const parsed = JSON.parse(answer.body) as { error?: { code: string; exitCode: number; message: string; data?: object } }
  if (answer.status !== 200 && parsed.error) throw revive(parsed.error)
  return parsed
}

type Answered = { code: string; exitCode: number; message: string; data?: object }

/** The error the service answered with, as its own class again (an error class of ours by that name, with that exit code), else an internal error naming it. */
function revive(answered: Answered): ForkpointError<object> {
  const Class = (errors as Record<string, unknown>)[answered.code]
  if (typeof Class === 'function' && Class.prototype instanceof ForkpointError) {
    const err = new (Class as new (message: string, data?: object) => ForkpointError<object>)(answered.message, answered.data ?? {})
    if (err.exitCode === answered.exitCode) return err
  }
  return new InternalError(`the service failed with ${answered.code}: ${answered.message}`, { cause: answered.code })
}
