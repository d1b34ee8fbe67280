import { ExitCode, ForkpointError } from './ForkpointError.js'

/** QEMU failed, refused a command over QMP, or a guest stopped answering: `data.machine` names the machine, `data.command` the QMP command. */
export class MachineError extends ForkpointError<{ machine?: string; command?: string; qmpClass?: string; stderr?: string; path?: string }> {
  readonly exitCode = ExitCode.internal
}

/** No machine of that id is running in this store. */
export class MachineNotFoundError extends ForkpointError<{ machine: string }> {
  readonly exitCode = ExitCode.usage
}

/** What a machine needs is missing here: QEMU, qemu-img, apt-get for the kernel, or a recipe's package (`data.tool`). */
export class MachineUnavailableError extends ForkpointError<{ tool: string; hint?: string }> {
  readonly exitCode = ExitCode.usage
}
