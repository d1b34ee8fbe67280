import { readFileSync } from 'node:fs'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { guestInitramfs } from './initramfs.js'
import { fetchGuestKernel, type GuestKernel } from './kernelPackage.js'
import type { MachineImage } from '../../objects/MachineImage.js'
import { GUEST_CMDLINE } from './MachineImage.js'
import { AGENT_SCRIPT, initScript } from './guestScripts.js'

/**
 * The busybox recipe: the cloud kernel and an initramfs of a static busybox, the virtio
 * modules the guest needs, our init and agent, stored as a machine image. The same kernel
 * and busybox give the same bytes, so building twice gives the same image.
 */
export async function buildBusyboxImage(store: Store, kernel?: GuestKernel): Promise<{ image: Digest; kernelRelease: string }> {
  const k = kernel ?? (await fetchGuestKernel())
  const image: MachineImage = {
    kind: 'machine-image',
    schemaVersion: 1,
    recipe: 'busybox',
    kernelRelease: k.release,
    kernel: await store.writeBlob(readFileSync(k.vmlinuz)),
    initrd: await store.writeBlob(guestInitramfs(k, initScript, [{ path: 'bin/agent', type: 'file', mode: 0o755, data: Buffer.from(AGENT_SCRIPT) }])),
    cmdline: GUEST_CMDLINE,
  }
  const id = await store.writeBlob(canonicalBytes(image))
  await store.sync()
  return { image: id, kernelRelease: k.release }
}
