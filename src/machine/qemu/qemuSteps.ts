import { type ChildProcess } from 'node:child_process'
import { MachineError } from '../../errors/index.js'
import { pollUntil } from '../../util/pollUntil.js'
import { QmpClient } from './QmpClient.js'
import { launchQemu, qemuFailed, waitForSocket } from './launchQemu.js'
import { type QemuLaunch, qemuArgs } from './qemuArgs.js'

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
 * Write the paused machine's state to `file` with `exec:cat`. With `withoutRam`, the
 * RAM (in its own shared file) is left out (`x-ignore-shared`): the stream holds devices
 * and CPU, some 60 KB. Polls until QEMU says it completed; a failed migration throws.
 */
export async function migrateToFile(qmp: QmpClient, file: string, withoutRam: boolean): Promise<void> {
  await qmp.execute('migrate-set-capabilities', { capabilities: [{ capability: 'x-ignore-shared', state: withoutRam }] })
  await qmp.execute('migrate', { uri: `exec:cat > ${shellQuote(file)}` })
  await pollUntil(async () => {
    const { status, 'error-desc': why } = await qmp.execute<{ status: string; 'error-desc'?: string }>('query-migrate')
    if (status === 'failed' || status === 'cancelled') throw new MachineError(`saving the machine's state failed: ${why ?? status}`, { command: 'migrate' })
    return status === 'completed' ? true : undefined
  }, 20)
}

/**
 * Start a QEMU waiting for a state (`-incoming defer`), feed it `file`, and leave it
 * paused once loaded. `x-ignore-shared` must be on at this end too: with it the stream
 * carries each RAM block's address, and the loader must expect that.
 */
export async function startIncoming(
  launch: QemuLaunch & { boot: null },
  file: string,
  o: { machine: string; log: string; detached: boolean; stateWithoutRam: boolean },
): Promise<ChildProcess> {
  const child = launchQemu(qemuArgs(launch), o)
  try {
    await waitForSocket(child, launch.sockets.qmp, o)
    await withQmp(launch.sockets.qmp, o.machine, async (qmp) => {
      await qmp.execute('migrate-set-capabilities', { capabilities: [{ capability: 'x-ignore-shared', state: o.stateWithoutRam }] })
      await qmp.execute('migrate-incoming', { uri: `exec:cat ${shellQuote(file)}` })
      await pollUntil(async () => {
        const { status } = await qmp.execute<{ status: string }>('query-status')
        if (status === 'paused' || status === 'postmigrate') return true
        if (status !== 'inmigrate') throw new MachineError(`machine ${o.machine}: loading its state ended ${status}`, { machine: o.machine, command: 'migrate-incoming' })
        if (child.exitCode !== null || child.signalCode !== null) throw qemuFailed(child, o)
        return undefined
      }, 20)
    })
    return child
  } catch (err) {
    child.kill('SIGKILL')
    throw child.exitCode !== null ? qemuFailed(child, o) : err
  }
}

/** QEMU runs `exec:` URIs with `/bin/sh -c`. */
const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
