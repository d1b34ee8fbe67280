import { MalformedObjectError } from '../errors/index.js'
import { type Digest, isDigest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import type { Accelerator } from './qemu/qemuArgs.js'

/**
 * The machine layer of an image: a paused microVM. Its RAM and its disk are stored in
 * fixed 64 KiB pieces (src/machine/filePieces.ts), its devices and CPU as QEMU's own
 * migration stream without the RAM (`x-ignore-shared`), which only the same QEMU version
 * can read back, so the version is kept and checked.
 */
export interface MachineLayer {
  kind: 'machine'
  schemaVersion: 1
  /** The machine image it booted from (kernel, initramfs, command line). */
  image: Digest
  memoryMiB: number
  /** The RAM file, a `chunks` object. */
  memory: Digest
  /** The devices' state, a blob. */
  devices: Digest
  /** The disk as a raw file, a `chunks` object. */
  disk: Digest
  diskBytes: number
  /** `qemu-system-x86_64 --version`'s number, `7.2.22`. */
  qemuVersion: string
  /** What it ran on: its CPU state loads only into a machine running on the same. */
  accelerator: Accelerator
  /** It has a network device (it was started with `--net egress`): so must every child, for its device state to load. Absent when it has none. */
  nic?: true
}

/** Guests larger than this are refused before a file of their size is made. */
export const MAX_MEMORY_MIB = 64 * 1024

export async function readMachineLayer(store: Store, digest: Digest): Promise<MachineLayer> {
  const layer = (await store.readObject(digest)) as unknown as MachineLayer
  const sane =
    layer.kind === 'machine' &&
    [layer.image, layer.memory, layer.devices, layer.disk].every(isDigest) &&
    Number.isSafeInteger(layer.memoryMiB) &&
    layer.memoryMiB > 0 &&
    layer.memoryMiB <= MAX_MEMORY_MIB &&
    Number.isSafeInteger(layer.diskBytes) &&
    layer.diskBytes > 0 &&
    typeof layer.qemuVersion === 'string' &&
    (layer.accelerator === 'kvm' || layer.accelerator === 'tcg') &&
    (layer.nic === undefined || layer.nic === true)
  if (!sane) throw new MalformedObjectError(`${digest} is not a machine layer`, { digest, expected: 'machine', actual: String(layer.kind) })
  return layer
}
