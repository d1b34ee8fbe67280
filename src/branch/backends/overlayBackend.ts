import { execFile } from 'node:child_process'
import { promises as fs, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { type OverlaySpec, mountShared, startHolder, throughHolder, unmount } from '../overlayMount.js'
import { stopStrayHolders } from '../../sandbox/namespaceHolder.js'
import { isAlive } from '../../sandbox/processId.js'
import { removeTree } from '../removeTree.js'
import type { BranchBackend } from './BranchBackend.js'

const exec = promisify(execFile)

/**
 * Kernel overlayfs: the base layers below, the branch's own `upper/` on top, mounted at
 * `mnt/` inside a namespace holder's mount namespace: this process's shared holder, or
 * for a persistent branch (which outlives this process) one of its own. Creation costs
 * the same whatever the workspace's size. A branch of a branch
 * stacks a frozen copy of its parent's upper layer on the parent's layers; its base is
 * then a read-only overlay of those layers at `base/`.
 */
export const overlayBackend: BranchBackend = {
  name: 'overlay',

  async create({ dir, layers, persistent }) {
    for (const d of ['upper', 'work', 'mnt', ...(layers.length > 1 ? ['base'] : [])]) mkdirSync(join(dir, d))
    return mount(dir, layers, persistent)
  },

  async revive(state, dir) {
    if (state.holder && isAlive(state.holder)) return state.holder
    // A volatile overlay leaves a mark that refuses the next mount (its upper may have lost
    // writes in a crash). Its owner runs, so the machine did not crash: only the mount went.
    // The mark goes with overlayfs's whole scratch directory, which it leaves mode 000 (an
    // unprivileged owner could not unlink inside it) and makes again.
    if (state.owner !== null) await removeTree(join(dir, 'work', 'work'))
    else await stopStrayHolders(holderPidFile(dir))
    return mount(dir, state.layers, state.owner === null)
  },

  viewMount: (dir) => join(dir, 'mnt'),

  base: (state, dir) => (state.layers.length === 1 ? state.layers[0]! : throughHolder(state.holder, join(dir, 'base'))),

  changeCandidates: (dir) => join(dir, 'upper'),

  async freeze(state, dir, into) {
    // -a keeps whiteouts (character devices 0/0, which anyone may create) and opaque-directory xattrs.
    await exec('cp', ['-a', '--reflink=auto', join(dir, 'upper'), into])
    return [into, ...state.layers]
  },

  async teardown(state, dir) {
    if (state.holder === null) return state.owner === null ? stopStrayHolders(holderPidFile(dir)) : undefined
    const exclusive = state.owner === null || !isAlive(state.owner)
    const targets = [join(dir, 'mnt'), ...(state.layers.length > 1 ? [join(dir, 'base')] : [])]
    await unmount(state.holder, targets, { exclusive })
    // Removing a former mount point waits on the kernel's namespace lock while other
    // unmounts finish: off the main thread, unlike the rest of the branch's removal.
    await Promise.all(targets.map((t) => fs.rmdir(t).catch(() => undefined)))
  },
}

async function mount(dir: string, layers: string[], persistent: boolean) {
  const specs: OverlaySpec[] = []
  if (layers.length > 1) specs.push({ target: join(dir, 'base'), lower: layers })
  specs.push({ target: join(dir, 'mnt'), lower: layers, upper: { upper: join(dir, 'upper'), work: join(dir, 'work') } })
  return persistent ? startHolder(specs, holderPidFile(dir)) : mountShared(specs)
}

/** Where a persistent branch's holder records itself. */
const holderPidFile = (dir: string): string => join(dir, 'holder.pid')
