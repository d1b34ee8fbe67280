import { z } from 'zod'
import { checkObject } from './checkObject.js'
import { DigestSchema } from './digestSchema.js'
import type { EdgeRule } from './edges.js'

/** Text a process is started with: an argument holding NUL cannot be passed (Node refuses it, a bug's exit 6, not bad data's 5). */
const ArgumentSchema = z.string().refine((text) => !text.includes('\0'), 'it holds a NUL')

/** An ext4 image of Debian packages, stored in fixed pieces like a machine's disk. */
export const RootFilesystemSchema = z.object({
  /** The raw ext4 image, a `chunks` object. */
  disk: DigestSchema,
  diskBytes: z.int().positive(),
  /** Every package in it, `name=version`. */
  packages: z.array(z.string()),
})
export type RootFilesystem = z.infer<typeof RootFilesystemSchema>

/** What a machine boots: a kernel, an initramfs and the kernel's command line, built by a recipe. */
export const MachineImageSchema = z.object({
  kind: z.literal('machine-image'),
  schemaVersion: z.literal(1),
  recipe: z.string(),
  /** The kernel's release, `6.1.0-56-cloud-amd64`. */
  kernelRelease: z.string(),
  /** The kernel (bzImage) blob. */
  kernel: DigestSchema,
  /** The initramfs (newc cpio) blob. */
  initrd: DigestSchema,
  /** Passed to QEMU as its `-append` argument. */
  cmdline: ArgumentSchema,
  /** A Debian root filesystem on the machine's disk (the python and node recipes); without one, the guest lives in its initramfs and the disk is a blank ext4 at /data. */
  rootfs: RootFilesystemSchema.optional(),
})
export type MachineImage = z.infer<typeof MachineImageSchema>

/** The parsed object as a machine image, unchanged; MalformedObjectError (exit 5) when it is not one. */
export function validateMachineImage(value: unknown, where: string): MachineImage {
  return checkObject(MachineImageSchema, value, where, 'machine image')
}

/** A machine image names its kernel, its initramfs and its root filesystem's disk; its recipe, release, command line and packages are text. */
export const MACHINE_IMAGE_EDGES: EdgeRule = { only: new Set(['kernel', 'initrd', 'disk']) }
