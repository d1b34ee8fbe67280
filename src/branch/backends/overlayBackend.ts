import { execFile } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { type OverlaySpec, mountDirect, privileged, startHolder, stopHolder, throughHolder, unmountDirect } from '../overlayMount.js'
import { isAlive } from '../processId.js'
import type { BranchState } from '../types.js'
import type { BranchBackend } from './BranchBackend.js'

const exec = promisify(execFile)

/**
 * Kernel overlayfs: the base layers below, the branch's own `upper/` on top, mounted at
 * `mnt/`. Creation costs the same whatever the workspace's size. A branch of a branch
 * stacks a frozen copy of its parent's upper layer on the parent's layers; its base is
 * then a read-only overlay of those layers at `base/`.
 */
export const overlayBackend: BranchBackend = {
  name: 'overlay',

  async create({ dir, layers, persistent }) {
    await Promise.all(['upper', 'work', 'mnt', ...(layers.length > 1 ? ['base'] : [])].map((d) => fs.mkdir(join(dir, d))))
    return mount(dir, layers, persistent)
  },

  async revive(state, dir) {
    if (privileged) {
      if (await isMounted(join(dir, 'mnt'))) return null
      return mount(dir, state.layers, true)
    }
    if (state.holder && isAlive(state.holder)) return state.holder
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
    if (privileged) await unmountDirect([join(dir, 'mnt'), join(dir, 'base')])
    else if (state.holder) await stopHolder(state.holder)
  },
}

async function mount(dir: string, layers: string[], persistent: boolean) {
  const specs: OverlaySpec[] = []
  if (layers.length > 1) specs.push({ target: join(dir, 'base'), lower: layers })
  specs.push({ target: join(dir, 'mnt'), lower: layers, upper: { upper: join(dir, 'upper'), work: join(dir, 'work') } })
  if (!privileged) return startHolder(specs, { persistent })
  await mountDirect(specs)
  return null
}

async function isMounted(target: string): Promise<boolean> {
  const info = await fs.readFile('/proc/self/mountinfo', 'utf8')
  return info.split('\n').some((line) => line.split(' ')[4] === target)
}
