import { chownSync, createReadStream, createWriteStream, rmSync } from 'node:fs'
import { type Server, connect, createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { MachineError } from '../../errors/index.js'
import { pollUntil } from '../../util/pollUntil.js'
import { QmpClient } from './QmpClient.js'
import { type LaunchOptions, type LaunchedQemu, launchQemu, qemuFailed, waitForSocket } from './launchQemu.js'
import type { QemuLaunch } from './qemuArgs.js'
import { qemuUser } from './qemuUser.js'

/** The QMP steps of a snapshot and a fork, each what QEMU 7.2 needs, found by trying (docs/machine.md). */

/** A QMP connection for `use`, closed after. One client at a time is QEMU's rule: others wait their turn. */
export async function withQmp<T>(socket: string, machine: string, use: (qmp: QmpClient) => Promise<T>): Promise<T> {
  const qmp = await QmpClient.connect(socket, machine)
  try {
    return await use(qmp)
  } finally {
    qmp.close()
  }
}

/**
 * Write the paused machine's state to `file`: QEMU sends it to a unix socket this process
 * listens on in the machine's socket directory, so QEMU opens no file and runs no program
 * for it. With `withoutRam`, the RAM (in its own shared file) is left out
 * (`x-ignore-shared`): the stream holds devices and CPU, some 60 KB. Polls until QEMU says
 * it completed and the stream is written; a failed migration throws.
 */
export async function migrateToFile(qmp: QmpClient, file: string, withoutRam: boolean, socketDir: string): Promise<void> {
  const path = join(socketDir, 'state-out.sock')
  const server = await listenForQemu(path)
  try {
    const written = new Promise<void>((resolve, reject) => {
      server.once('connection', (stream) => {
        server.close()
        pipeline(stream, createWriteStream(file)).then(resolve, reject)
      })
    })
    written.catch(() => undefined) // a migration that fails before it connects is reported by its status
    await qmp.execute('migrate-set-capabilities', { capabilities: [{ capability: 'x-ignore-shared', state: withoutRam }] })
    await qmp.execute('migrate', { uri: `unix:${path}` })
    await pollUntil(async () => {
      const { status, 'error-desc': why } = await qmp.execute<{ status: string; 'error-desc'?: string }>('query-migrate')
      if (status === 'failed' || status === 'cancelled') throw new MachineError(`saving the machine's state failed: ${why ?? status}`, { command: 'migrate' })
      return status === 'completed' ? true : undefined
    }, 20)
    await written
  } finally {
    server.close()
    rmSync(path, { force: true })
  }
}

/** Listen on `path` for one QEMU connection: the socket is its QEMU user's to connect to (root's QEMU is not root by then). */
async function listenForQemu(path: string): Promise<Server> {
  rmSync(path, { force: true })
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const user = qemuUser()
  if (user) chownSync(path, user.uid, user.gid)
  return server
}

/**
 * Start a QEMU waiting for a state (`-incoming defer`), feed it `file`, and leave it
 * paused once loaded. `x-ignore-shared` must be on at this end too: with it the stream
 * carries each RAM block's address, and the loader must expect that.
 */
export async function startIncoming(launch: QemuLaunch & { boot: null }, file: string, o: LaunchOptions & { stateWithoutRam: boolean }): Promise<LaunchedQemu> {
  const launched = await launchQemu(launch, o)
  const { child } = launched
  try {
    await waitForSocket(launched, launch.sockets.qmp, o)
    await withQmp(launch.sockets.qmp, o.machine, async (qmp) => {
      await qmp.execute('migrate-set-capabilities', { capabilities: [{ capability: 'x-ignore-shared', state: o.stateWithoutRam }] })
      const socket = join(dirname(launch.sockets.qmp), 'state-in.sock')
      await qmp.execute('migrate-incoming', { uri: `unix:${socket}` })
      await waitForSocket(launched, socket, o)
      const sent = pipeline(createReadStream(file), connect(socket))
      sent.catch(() => undefined) // a load that fails is reported by QEMU's status
      await pollUntil(async () => {
        const { status } = await qmp.execute<{ status: string }>('query-status')
        if (status === 'paused' || status === 'postmigrate') return true
        if (status !== 'inmigrate') throw new MachineError(`machine ${o.machine}: loading its state ended ${status}`, { machine: o.machine, command: 'migrate-incoming' })
        if (child.exitCode !== null || child.signalCode !== null) throw qemuFailed(child, launch, o)
        return undefined
      }, 20)
    })
    return launched
  } catch (err) {
    child.kill('SIGKILL')
    throw child.exitCode !== null ? qemuFailed(child, launch, o) : err
  }
}
