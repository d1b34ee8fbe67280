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

/** What a watched guest stopped with: QEMU's status or exit, QEMU's own words and the console's last lines. */
export interface GuestStopData {
  machine: string
  /** QMP's run state (`internal-error`, `guest-panicked`, `shutdown`), `exited`, or `no-answer` when the guest's agent did not answer in time. */
  status: string
  qemuLog: string
  console: string
}

/** The accelerator asked for cannot run this guest (a KVM that fails a real guest): the machine runs with `--accel tcg`. */
export class AcceleratorFailedError extends ForkpointError<GuestStopData & { accelerator: string }> {
  readonly exitCode = ExitCode.usage
}

/** The guest stopped before it answered: its kernel panicked, it powered off, or QEMU gave up on it. */
export class GuestStoppedError extends ForkpointError<GuestStopData> {
  readonly exitCode = ExitCode.corrupt
}

/** A script evaluated in a machine's page threw (or its promise rejected): `data.exception` is the page's description of it. */
export class PageScriptError extends ForkpointError<{ machine: string; exception: string }> {
  readonly exitCode = ExitCode.difference
}
