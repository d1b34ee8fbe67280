import { type Socket, createConnection } from 'node:net'
import { pollUntil } from '../../util/pollUntil.js'

/**
 * Connect to a unix socket QEMU listens on. QEMU serves one client of a socket chardev
 * (QMP, the agent) at a time and listens with a backlog of one: a fourth caller's connect
 * fails with EAGAIN while the others wait. Such a caller tries again (backing off to 50 ms)
 * until the socket takes it; any other error is the caller's to report.
 */
export async function connectUnix(path: string): Promise<Socket> {
  return pollUntil(
    () =>
      new Promise<Socket | undefined>((resolve, reject) => {
        const socket = createConnection(path)
        socket.once('connect', () => {
          socket.removeListener('error', onError)
          resolve(socket)
        })
        const onError = (err: NodeJS.ErrnoException) => (err.code === 'EAGAIN' ? resolve(undefined) : reject(err))
        socket.once('error', onError)
      }),
  )
}
