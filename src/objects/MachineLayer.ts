import { z } from 'zod'
import { checkObject } from './checkObject.js'
import { DigestSchema } from './digestSchema.js'
import type { EdgeRule } from './edges.js'

export const ACCELERATORS = ['kvm', 'tcg'] as const
export type Accelerator = (typeof ACCELERATORS)[number]

/** Guests larger than this are refused before a file of their size is made. */
export const MAX_MEMORY_MIB = 64 * 1024

/**
 * The machine layer of an image: a paused microVM. Its RAM and its disk are stored in
 * fixed 64 KiB pieces (src/machine/filePieces.ts), its devices and CPU as QEMU's own
 * migration stream without the RAM (`x-ignore-shared`), which only the same QEMU version
 * can read back, so the version is kept and checked.
 */
export const MachineLayerSchema = z.object({
  kind: z.literal('machine'),
  schemaVersion: z.literal(1),
  /** The machine image it booted from (kernel, initramfs, command line). */
  image: DigestSchema,
  memoryMiB: z.int().positive().max(MAX_MEMORY_MIB),
  /** The RAM file, a `chunks` object. */
  memory: DigestSchema,
  /** The devices' state, a blob. */
  devices: DigestSchema,
  /** The disk as a raw file, a `chunks` object. */
  disk: DigestSchema,
  diskBytes: z.int().positive(),
  /** `qemu-system-x86_64 --version`'s number, `7.2.22`. */
  qemuVersion: z.string(),
  /** What it ran on: its CPU state loads only into a machine running on the same. */
  accelerator: z.enum(ACCELERATORS),
  /** It has a network device (it was started with `--net egress`): so must every child, for its device state to load. Absent when it has none. */
  nic: z.literal(true).optional(),
})
export type MachineLayer = z.infer<typeof MachineLayerSchema>

/** The parsed object as a machine layer, unchanged; MalformedObjectError (exit 5) when it is not one. */
export function validateMachineLayer(value: unknown, where: string): MachineLayer {
  return checkObject(MachineLayerSchema, value, where, 'machine layer')
}

/** A machine layer names its image, its RAM, its devices' state and its disk; its QEMU version is QEMU's text. */
export const MACHINE_LAYER_EDGES: EdgeRule = { only: new Set(['image', 'memory', 'devices', 'disk']) }
