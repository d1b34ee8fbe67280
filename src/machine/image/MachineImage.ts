import { MalformedObjectError } from '../../errors/index.js'
import { type Digest, isDigest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'

/** What a machine boots: a kernel, an initramfs and the kernel's command line, built by a recipe. */
export interface MachineImage {
  kind: 'machine-image'
  schemaVersion: 1
  recipe: string
  /** The kernel's release, `6.1.0-56-cloud-amd64`. */
  kernelRelease: string
  /** The kernel (bzImage) blob. */
  kernel: Digest
  /** The initramfs (newc cpio) blob. */
  initrd: Digest
  cmdline: string
  /** A Debian root filesystem on the machine's disk (the python and node recipes); without one, the guest lives in its initramfs and the disk is a blank ext4 at /data. */
  rootfs?: RootFilesystem
}

/** An ext4 image of Debian packages, stored in fixed pieces like a machine's disk. */
export interface RootFilesystem {
  /** The raw ext4 image, a `chunks` object. */
  disk: Digest
  diskBytes: number
  /** Every package in it, `name=version`. */
  packages: string[]
}

/**
 * The kernel's command line. `tsc_early_khz` is not a tuning: under TCG the microvm
 * kernel hangs at "Marking TSC unstable" without it. The rest cut a boot from 2.6-3.1 s
 * to 2.2-2.4 s here (no legacy devices to probe, no self-tests, quiet). `loglevel=1` keeps
 * the console quiet but for emergencies: a panic's lines reach the console, and so the
 * report of a machine that failed.
 */
export const GUEST_CMDLINE =
  'console=ttyS0 tsc_early_khz=2000000 panic=-1 quiet loglevel=1 mitigations=off tsc=reliable nowatchdog cryptomgr.notests random.trust_cpu=on i8042.noaux i8042.nokbd i8042.nopnp 8250.nr_uarts=1'

export async function readMachineImage(store: Store, digest: Digest): Promise<MachineImage> {
  const image = (await store.readObject(digest)) as unknown as MachineImage
  const rootfsSane = (r: RootFilesystem | null | undefined) =>
    r === undefined || (typeof r === 'object' && r !== null && isDigest(r.disk) && Number.isSafeInteger(r.diskBytes) && r.diskBytes > 0 && Array.isArray(r.packages))
  if (
    image.kind !== 'machine-image' ||
    !isDigest(image.kernel) ||
    !isDigest(image.initrd) ||
    typeof image.cmdline !== 'string' ||
    typeof image.kernelRelease !== 'string' ||
    !rootfsSane(image.rootfs)
  )
    throw new MalformedObjectError(`${digest} is not a machine image`, { digest, expected: 'machine-image', actual: String(image.kind) })
  return image
}
