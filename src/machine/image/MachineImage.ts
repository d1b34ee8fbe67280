import type { Digest } from '../../objects/digest.js'
import { type MachineImage, validateMachineImage } from '../../objects/MachineImage.js'
import type { Store } from '../../store/Store.js'

/**
 * The kernel's command line. `tsc_early_khz` is not a tuning: under TCG the microvm
 * kernel hangs at "Marking TSC unstable" without it. The rest cut a boot from 2.6-3.1 s
 * to 2.2-2.4 s here (no legacy devices to probe, no self-tests, quiet). `loglevel=1` keeps
 * the console quiet but for emergencies: a panic's lines reach the console, and so the
 * report of a machine that failed.
 */
export const GUEST_CMDLINE =
  'console=ttyS0 tsc_early_khz=2000000 panic=-1 quiet loglevel=1 mitigations=off tsc=reliable nowatchdog cryptomgr.notests random.trust_cpu=on i8042.noaux i8042.nokbd i8042.nopnp 8250.nr_uarts=1'

/** The machine image object `digest` names (MalformedObjectError, exit 5, when it is something else). */
export async function readMachineImage(store: Store, digest: Digest): Promise<MachineImage> {
  return validateMachineImage(await store.readObject(digest), `machine image ${digest}`)
}
