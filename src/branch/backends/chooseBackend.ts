import { constants, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { BackendUnavailableError, UsageError } from '../../errors/index.js'
import type { Store } from '../../store/Store.js'
import { atomicWriteSync } from '../../util/atomicWrite.js'
import { inParentDir, readTextOrNullSync } from '../../util/fsx.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import { branchesDir } from '../lifecycle/branchStore.js'
import { hostMountVia } from '../mount/hostMount.js'
import { removeTree } from '../lifecycle/removeTree.js'
import { type OverlaySpec, mountShared, unmount } from '../mount/overlayMount.js'
import type { BackendName } from '../types.js'
import type { BranchBackend } from './BranchBackend.js'
import { copyBackend, reflinkBackend } from './cloneBackend.js'
import { overlayBackend } from './overlayBackend.js'

export const BACKENDS: Record<BackendName, BranchBackend> = { overlay: overlayBackend, reflink: reflinkBackend, copy: copyBackend }

export function backendByName(name: string): BranchBackend {
  const backend = BACKENDS[name as BackendName]
  if (!backend) throw new UsageError(`unknown branch backend ${JSON.stringify(name)} (overlay, reflink or copy)`, { name })
  return backend
}

const probes = new Map<string, Promise<boolean>>()

/**
 * Can this process make that kind of branch inside this store? Tried for real once per
 * user and boot: the answer is kept in the store (`branches/probes/`), so a CLI command
 * does not mount and unmount a probe each time (a spawn of the runtime and four mounts'
 * worth of the kernel's namespace lock). A new boot may bring another kernel, and another
 * user other rights: both ask again.
 */
export function backendWorks(store: Store, name: BackendName): Promise<boolean> {
  const key = `${store.root}\0${name}`
  if (!probes.has(key)) probes.set(key, remembered(store, name))
  return probes.get(key)!
}

async function remembered(store: Store, name: BackendName): Promise<boolean> {
  const file = branchesDir(store, 'probes', `${name}.${process.getuid?.() ?? 'user'}`)
  const boot = readTextOrNullSync('/proc/sys/kernel/random/boot_id')?.trim()
  const kept = readStateTextOrNull(file)?.split(' ')
  if (boot && kept?.[0] === boot) return kept[1] === 'works'
  const works = await probe(store, name).catch(() => false)
  if (boot) inParentDir(file, () => atomicWriteSync(file, [Buffer.from(`${boot} ${works ? 'works' : 'fails'}`)]))
  return works
}

async function probe(store: Store, name: BackendName): Promise<boolean> {
  if (name === 'copy') return true
  const dir = store.tempPath(`probe-${name}`)
  await fs.mkdir(dir, { recursive: true })
  try {
    if (name === 'reflink') {
      await fs.writeFile(join(dir, 'a'), 'probe')
      await fs.copyFile(join(dir, 'a'), join(dir, 'b'), constants.COPYFILE_FICLONE_FORCE)
      return true
    }
    await Promise.all(['lower', 'upper', 'work', 'mnt'].map((d) => fs.mkdir(join(dir, d))))
    const spec: OverlaySpec = { target: join(dir, 'mnt'), lower: [join(dir, 'lower')], upper: { upper: join(dir, 'upper'), work: join(dir, 'work') } }
    await unmount(await mountShared([spec]), [spec.target], { exclusive: false })
    return true
  } finally {
    await removeTree(dir)
  }
}

/**
 * The backend asked for (checked), or the best one that works here: overlay, then reflink,
 * then copy; `onHost`, an overlay only where this process can mount it in the host's mount
 * namespace (a clone is always a directory of the host).
 */
export async function chooseBackend(store: Store, wanted?: BackendName | 'auto', { onHost = false }: { onHost?: boolean } = {}): Promise<BranchBackend> {
  if (wanted && wanted !== 'auto') {
    const backend = backendByName(wanted)
    if (!(await backendWorks(store, backend.name))) {
      throw new BackendUnavailableError(
        `the ${wanted} branch backend does not work here (${wanted === 'reflink' ? 'the store is not on a reflink file system (btrfs, XFS)' : 'overlayfs cannot be mounted, even in a user namespace'})`,
        { backend: wanted },
      )
    }
    return backend
  }
  if ((!onHost || hostMountVia() !== null) && (await backendWorks(store, 'overlay'))) return overlayBackend
  return (await backendWorks(store, 'reflink')) ? reflinkBackend : copyBackend
}
