import { openStore } from '../../store/findStore.js'
import type { MachineRef } from '../MachineBackend.js'
import { connectUnix } from './connectUnix.js'
import { consoleSocket } from './qemuArgs.js'
import { runningRecord } from './qemuProcess.js'

/** The key that detaches from a console: Ctrl-] (as telnet's and virsh's). */
export const CONSOLE_DETACH_KEY = 0x1d

export interface MachineConsoleOptions extends MachineRef {
  /** What is typed: bytes go to the guest's serial console as they come, up to the detach key. */
  input: NodeJS.ReadableStream
  /** Where the console's output goes. */
  output: NodeJS.WritableStream
}

/**
 * Attach to a running machine's serial console, where its guest runs a shell: `input`
 * goes to it and its output to `output`, until the detach key (`CONSOLE_DETACH_KEY`) comes
 * in `input`, `input` ends, or the machine's console closes (the machine stopped). One
 * client at a time: a second waits until the first detaches. Raw terminal mode is the
 * caller's to set (`machine console` does, on a terminal).
 * @throws {MachineNotFoundError} (exit 2) no such machine
 */
export async function machineConsole(o: MachineConsoleOptions): Promise<void> {
  const record = await runningRecord((await openStore(o)).store, o.machine)
  const serial = await connectUnix(consoleSocket(record.launch.sockets.qmp))
  const { input, output } = o
  return new Promise((resolve, reject) => {
    const detach = () => {
      input.off('data', onInput).off('end', detach)
      serial.end()
      resolve()
    }
    const onInput = (chunk: Buffer | string) => {
      const bytes = Buffer.from(chunk)
      const at = bytes.indexOf(CONSOLE_DETACH_KEY)
      serial.write(at < 0 ? bytes : bytes.subarray(0, at))
      if (at >= 0) detach()
    }
    input.on('data', onInput).on('end', detach)
    serial.on('data', (bytes: Buffer) => output.write(bytes))
    serial.on('close', detach)
    serial.on('error', (err) => {
      input.off('data', onInput).off('end', detach)
      reject(err)
    })
  })
}
