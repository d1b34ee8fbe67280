import { execFile } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BackendUnavailableError, UsageError } from '../../errors/index.js'
import { removeTree } from '../lifecycle/removeTree.js'
import type { BranchBackend } from './BranchBackend.js'

const exec = promisify(execFile)

/**
 * A branch as a whole copy of its base at `root/`: per-file clones on file systems that
 * share extents (`reflink`: btrfs, XFS; O(files), no data copied) or plain copies (`copy`,
 * the portable fallback). Timestamps are kept so that comparing the copy with its base
 * can skip unchanged files by size and mtime; hard links are not kept, so two files that
 * happened to share an object never share writes.
 */
function cloneBackend(name: 'reflink' | 'copy'): BranchBackend {
  const clone = async (from: string, to: string): Promise<void> => {
    try {
      await exec('cp', ['-R', '-P', '--preserve=mode,timestamps', `--reflink=${name === 'reflink' ? 'always' : 'never'}`, `${from}/.`, to])
    } catch (err) {
      await removeTree(to)
      const why = (err as { stderr?: string }).stderr?.trim() || String(err)
      throw new BackendUnavailableError(`cannot ${name === 'reflink' ? 'clone (reflink)' : 'copy'} ${from} into ${to}: ${why}`, { from, to })
    }
  }
  return {
    name,
    hostViewFor({ path }) {
      if (path !== undefined) throw new UsageError(`a branch of the ${name} backend is a directory of the store; --path needs the overlay backend`, { path })
      return undefined
    },
    async create({ dir, layers, disk }) {
      if (disk !== undefined) throw new BackendUnavailableError(`the ${name} backend cannot cap a branch's disk: --disk needs the overlay backend, as root`, { backend: name })
      await fs.mkdir(join(dir, 'root'))
      await clone(layers[0]!, join(dir, 'root'))
      return { holder: null }
    },
    revive: async () => null,
    viewMount: (_state, dir) => join(dir, 'root'),
    base: (state) => state.layers[0]!,
    changeCandidates: () => null,
    async freeze(_state, dir, into) {
      await fs.mkdir(into)
      await clone(join(dir, 'root'), into)
      return [into]
    },
    teardown: async () => undefined,
  }
}

export const reflinkBackend = cloneBackend('reflink')
export const copyBackend = cloneBackend('copy')
