import { type Socket, createConnection } from 'node:net'

/**
 * Connect to a unix socket QEMU listens on. QEMU serves one client of a socket chardev
 * (QMP, the agent) at a time and listens with a backlog of one: a fourth caller's connect
 * fails with EAGAIN while the others wait. Such a caller tries again (backing off to 50 ms)
 * until the socket takes it; any other error is the caller's to report.
 */
export async function connectUnix(path: string): Promise<Socket> {
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = createConnection(path)
        socket.once('connect', () => {
          socket.removeListener('error', reject)
          resolve(socket)
        })
        socket.once('error', reject)
      })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
}
