import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { storeFilePieces } from '../filePieces.js'
import { BASE_PACKAGES, type ExtraFile, buildExt4, downloadPackages, packageClosure } from './debianRootfs.js'
import { guestInitramfs } from './initramfs.js'
import { forkpointCacheDir } from './cacheDir.js'
import { fetchGuestKernel, type GuestKernel } from './kernelPackage.js'
import type { MachineImage } from '../../objects/MachineImage.js'
import { GUEST_CMDLINE } from './MachineImage.js'
import { ROOTFS_INIT, switchRootInit } from './guestScripts.js'
import { FRESH_START_PATH, freshStartElf } from './freshStartElf.js'

/** Room left on a root filesystem image for what the guest writes; `--disk` grows it at boot. */
const FREE_MIB = 64

/** The users and groups a root filesystem knows: root, and nobody for what should not run as root. */
const PASSWD = 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n'
const GROUP = 'root:x:0:\nnogroup:x:65534:\n'

/**
 * A recipe with a Debian root filesystem: the closure of `packages` and the base
 * packages (qemu-guest-agent among them), unpacked into an ext4 image stored in fixed
 * pieces, and an initramfs that mounts it as the root, with the recipe's own `files`.
 * `recipe` names it.
 */
export async function buildRootfsImage(
  store: Store,
  recipe: string,
  packages: readonly string[],
  files: readonly ExtraFile[] = [],
  kernel?: GuestKernel,
): Promise<{ image: Digest; kernelRelease: string }> {
  const k = kernel ?? (await fetchGuestKernel())
  const closure = await packageClosure([...BASE_PACKAGES, ...packages])
  const debs = await downloadPackages(closure)
  const work = mkdtempSync(join(forkpointCacheDir(), '.image-'))
  try {
    const ext4 = join(work, 'root.ext4')
    await buildExt4(
      debs,
      [
        { path: 'usr/sbin/forkpoint-init', data: ROOTFS_INIT, mode: 0o755 },
        { path: `usr${FRESH_START_PATH}`, data: freshStartElf(), mode: 0o755 }, // /bin is usr/bin
        { path: 'etc/passwd', data: PASSWD, mode: 0o644 },
        { path: 'etc/group', data: GROUP, mode: 0o644 },
        { path: 'etc/hostname', data: 'forkpoint\n', mode: 0o644 },
        ...files,
      ],
      ext4,
      FREE_MIB,
    )
    const disk = await storeFilePieces(store, ext4)
    const image: MachineImage = {
      kind: 'machine-image',
      schemaVersion: 1,
      recipe,
      kernelRelease: k.release,
      kernel: await store.writeBlob(readFileSync(k.vmlinuz)),
      initrd: await store.writeBlob(guestInitramfs(k, switchRootInit)),
      cmdline: GUEST_CMDLINE,
      rootfs: { disk: disk.digest, diskBytes: disk.size, packages: closure.map((p) => `${p.name}=${p.version}`) },
    }
    const id = await store.writeBlob(canonicalBytes(image))
    await store.sync()
    return { image: id, kernelRelease: k.release }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
