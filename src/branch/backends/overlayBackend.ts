import { execFile } from 'node:child_process'
import { promises as fs, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BackendUnavailableError } from '../../errors/index.js'
import { hostMountVia, mountOnHost, mountStatus, unmountFromHost } from '../mount/hostMount.js'
import { type OverlaySpec, mountShared, startHolder, throughHolder, unmount } from '../mount/overlayMount.js'
import type { BranchState, HostView } from '../types.js'
import { isHolder, stopStrayHolders } from '../../sandbox/namespaceHolder.js'
import { isAlive } from '../../sandbox/processId.js'
import { removeTree } from '../lifecycle/removeTree.js'
import { makeBranchDisk, reviveBranchDisk, unmountBranchDisk } from '../mount/branchDisk.js'
import type { BranchBackend } from './BranchBackend.js'
import { HOST_MOUNT_NEEDS } from './hostMountNeeds.js'

const exec = promisify(execFile)

/**
 * Kernel overlayfs: the base layers below, the branch's own `upper/` on top, mounted at
 * `mnt/` (or a `path` asked for). A branch that outlives this process (persistent) is
 * mounted in the host's own mount namespace where that can be done (root: kernel
 * overlayfs; anyone else: fuse-overlayfs), so that every tool can work in it; otherwise,
 * and for branches that end with this process, inside a namespace holder's mount
 * namespace: this process's shared holder, or for a persistent branch one of its own.
 * Creation costs the same whatever the workspace's size. A branch of a branch stacks a
 * frozen copy of its parent's upper layer on the parent's layers; its base is then a
 * read-only overlay of those layers at `base/`.
 */
export const overlayBackend: BranchBackend = {
  name: 'overlay',

  hostViewFor({ persistent, onHost, path }) {
    if (!persistent && !onHost && path === undefined) return undefined
    const via = hostMountVia()
    if (via) return { via, path: path ?? null }
    if (path !== undefined) throw new BackendUnavailableError(`cannot mount a branch at ${path}: ${HOST_MOUNT_NEEDS}`, { path })
    if (onHost) throw new BackendUnavailableError(`cannot make an overlay branch that other tools can use: ${HOST_MOUNT_NEEDS} (the copy backend can)`, {})
    return undefined
  },

  async create({ dir, layers, persistent, hostView, disk }) {
    if (disk !== undefined) {
      // a holder's namespace need not see a mount made later in the host's: the cap holds only where it was made
      if (hostView?.via !== 'kernel')
        throw new BackendUnavailableError(`cannot cap a branch's disk here: --disk needs root and a branch mounted on the host (persistent, or with a path)`, {})
      await makeBranchDisk(dir, disk)
    }
    for (const d of [...(disk === undefined ? ['upper', 'work'] : []), 'mnt', ...(layers.length > 1 ? ['base'] : [])]) mkdirSync(join(dir, d))
    if (hostView) {
      try {
        await mountOnHost(hostView.via, specs(dir, layers, hostView))
        return { holder: null, hostView }
      } catch (err) {
        // asked for a path, a disk or a directory other tools can use, or a kernel that refuses us: a holder gives none of them
        if (!persistent || hostView.path !== null || disk !== undefined) throw err
      }
    }
    return { holder: await mount(dir, layers, persistent), hostView: undefined }
  },

  async revive(state, dir) {
    if (state.disk !== undefined) await reviveBranchDisk(dir)
    if (state.hostView) return remountOnHost(state, dir)
    if (state.holder && isHolder(state.holder)) return state.holder
    // A volatile overlay leaves a mark that refuses the next mount (its upper may have lost
    // writes in a crash). Its owner runs, so the machine did not crash: only the mount went.
    // The mark goes with overlayfs's whole scratch directory, which it leaves mode 000 (an
    // unprivileged owner could not unlink inside it) and makes again.
    if (state.owner !== null) await removeTree(join(dir, 'work', 'work'))
    else await stopStrayHolders(holderPidFile(dir))
    return mount(dir, state.layers, state.owner === null)
  },

  viewMount: (state, dir) => state.hostView?.path ?? join(dir, 'mnt'),

  base: (state, dir) => (state.layers.length === 1 ? state.layers[0]! : throughHolder(state.holder, join(dir, 'base'))),

  changeCandidates: (dir) => join(dir, 'upper'),

  async freeze(state, dir, into) {
    // -a keeps whiteouts (character devices 0/0, which anyone may create) and opaque-directory xattrs;
    // the trailing slash copies a capped branch's upper layer, not its link to it
    await exec('cp', ['-a', '--reflink=auto', `${join(dir, 'upper')}/`, into])
    return [into, ...state.layers]
  },

  async teardown(state, dir) {
    const targets = [overlayBackend.viewMount(state, dir), ...(state.parent !== null ? [join(dir, 'base')] : [])]
    if (state.hostView) {
      await unmountFromHost(state.hostView.via, targets)
      if (state.disk !== undefined) await unmountBranchDisk(dir)
      if (state.owner === null) await stopStrayHolders(holderPidFile(dir)) // its maker fell back to a holder, then died
      // an empty --path directory goes too, as `git worktree remove` removes its directory
      return void (await Promise.all(targets.map((t) => fs.rmdir(t).catch(() => undefined))))
    }
    if (state.holder === null) return state.owner === null ? stopStrayHolders(holderPidFile(dir)) : undefined
    const exclusive = state.owner === null || !isAlive(state.owner)
    await unmount(state.holder, targets, { exclusive })
    // Removing a former mount point waits on the kernel's namespace lock while other
    // unmounts finish: off the main thread, unlike the rest of the branch's removal.
    await Promise.all(targets.map((t) => fs.rmdir(t).catch(() => undefined)))
  },
}

/** The branch's overlays: the read-only base of a branch of a branch, then the writable view. */
function specs(dir: string, layers: string[], hostView?: HostView): OverlaySpec[] {
  const view: OverlaySpec = { target: hostView?.path ?? join(dir, 'mnt'), lower: layers, upper: { upper: join(dir, 'upper'), work: join(dir, 'work') } }
  return layers.length > 1 ? [{ target: join(dir, 'base'), lower: layers }, view] : [view]
}

async function mount(dir: string, layers: string[], persistent: boolean) {
  return persistent ? startHolder(specs(dir, layers), holderPidFile(dir)) : mountShared(specs(dir, layers))
}

/**
 * Mount again what is no longer mounted of a branch in the host's namespace (after a
 * reboot, or an unmount behind our back): its upper layer kept every change.
 */
async function remountOnHost(state: BranchState, dir: string): Promise<null> {
  const { via } = state.hostView!
  const gone = specs(dir, state.layers, state.hostView)
    .map((spec) => ({ spec, status: mountStatus(spec.target) }))
    .filter((g) => g.status !== 'mounted')
  if (gone.length === 0) return null
  await unmountFromHost(
    via,
    gone.filter((g) => g.status === 'dead').map((g) => g.spec.target),
  )
  await mountOnHost(
    via,
    gone.map((g) => g.spec),
  )
  return null
}

/** Where a persistent branch's holder records itself. */
const holderPidFile = (dir: string): string => join(dir, 'holder.pid')
