import type { Digest } from '../objects/digest.js'
import type { StoreLocator } from '../store/findStore.js'
import type { ExecResult } from './qemu/GuestChannel.js'
import type { AcceleratorRequest } from './qemu/accelerator.js'
import type { MachineNetOptions } from './net/machineNet.js'
import type { Accelerator } from '../objects/MachineLayer.js'

/**
 * Where a machine is: `starting` (its start or fork is under way), `running`, `paused`
 * (a snapshot that paused it was killed: the next command lets it go on), `gone` (its QEMU
 * exited), `failed` (its start or fork failed; logs kept), `incomplete` (what was starting
 * it was killed; `machine gc` reaps it).
 */
export type MachineState = 'starting' | 'running' | 'paused' | 'gone' | 'failed' | 'incomplete'

/** A machine as `machine ls` shows it. */
export interface MachineInfo {
  id: string
  pid: number
  /** Its QEMU runs. */
  running: boolean
  state: MachineState
  image: Digest
  accelerator: Accelerator
  memoryMiB: number
  /** The snapshot image it was forked or restored from; null when booted cold. */
  from: Digest | null
  /** Its latest snapshot image. */
  head: Digest | null
  detached: boolean
  /** Whether its memory (guest RAM + 256 MiB for QEMU) and pids are limited by cgroups: not where this host lets us make none. */
  limited: boolean
  createdAt: string
  /** Why its start or fork failed; its logs stay in its folder until `machine rm`. Null for a machine that started. */
  failure: string | null
  /** When its time to live ends (ISO 8601): its QEMU is killed then, and the next `machine ls` or `gc` removes it. Null for no time to live. */
  expiresAt: string | null
}

/**
 * How long a machine may live once its start completes: milliseconds, or a duration such
 * as `30m`, `2h`, `90s` (a bare number in a string is seconds), rounded up to whole
 * seconds. Its launcher kills its QEMU when the time is up, whether or not any forkpoint
 * process runs then (docs/machine.md).
 */
export type MachineTtl = number | string

export interface BootOptions extends StoreLocator, MachineNetOptions {
  /** A machine image (`buildMachineImage`). */
  image: Digest
  /** Guest RAM. @default 256 */
  memoryMiB?: number
  /**
   * The guest's disk: for a busybox image a blank ext4 at /data (default 256 MiB); for an
   * image with a root filesystem, the root, grown to this size at boot (default: the
   * image's filesystem and 256 MiB more; less than the filesystem is refused).
   */
  diskMiB?: number
  /** Outlive the caller (the CLI's machines do); otherwise killed with it. @default false */
  detached?: boolean
  /** KVM, TCG, or `auto`: KVM only where a boot of this kernel on it reached the guest's agent (docs/machine.md). @default 'auto' */
  accel?: AcceleratorRequest
  /** Kill the machine after this long (MachineTtl). @default none */
  ttl?: MachineTtl
}

export interface MachineRef extends StoreLocator {
  machine: string
}

/** A snapshot taken: the image made (its `machine` layer holds the machine), how long the guest was paused, what the store gained. */
export interface MachineSnapshot {
  image: Digest
  layer: Digest
  pausedMs: number
  /** Bytes of RAM and disk the store did not hold before (what a second snapshot of one machine adds). */
  newBytes: number
  memoryBytes: number
  diskBytes: number
  devicesBytes: number
}

export interface ForkOptions extends StoreLocator, MachineNetOptions {
  /** A snapshot image with a machine layer. */
  image: Digest
  n: number
  detached?: boolean
  /** A device state loads only on the accelerator it was saved on: `auto` takes that one, another is refused. @default 'auto' */
  accel?: AcceleratorRequest
  /**
   * Load the device state of an image that came from another store (pulled, cloned,
   * unpacked): a QEMU migration stream is not built for hostile input, so such an image is
   * refused without this. Verify its signature first (`pullImage({ verifyKey })`).
   * @default false
   */
  trustMachine?: boolean
  /** Kill each child this long after it starts (MachineTtl). @default none */
  ttl?: MachineTtl
}

/** A machine's memory as the host sees it: PSS shares each shared page among the processes mapping it. */
export interface MachineStats {
  pid: number
  rssBytes: number
  pssBytes: number
  privateDirtyBytes: number
}

/**
 * A way to run machines. QEMU is the one here (`qemuBackend`); another (Firecracker, Cloud
 * Hypervisor) would keep these semantics: children of a snapshot continue from its
 * instant, each with a disk of its own and a network of its own (none by default).
 */
export interface MachineBackend {
  readonly name: string
  boot(o: BootOptions): Promise<MachineInfo>
  exec(o: MachineRef & { command: string }): Promise<ExecResult>
  snapshot(o: MachineRef & { message?: string }): Promise<MachineSnapshot>
  restore(o: Omit<ForkOptions, 'n'>): Promise<MachineInfo>
  fork(o: ForkOptions): Promise<MachineInfo[]>
  kill(o: MachineRef): Promise<void>
  stats(o: MachineRef): Promise<MachineStats>
  list(o: StoreLocator): Promise<MachineInfo[]>
}
