import type { Change } from '../../world/diff/diffTrees.js'
import { quotePath } from '../../world/diff/quotePath.js'
import { pc } from './colors.js'

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`
}

export function short(id: string): string {
  return id.replace(/^sha256:/, '').slice(0, 12)
}

/** git's letters: a mode change is a modification, `T` a change of type (file, symlink, directory). */
const MARK: Record<Change['status'], [string, 'green' | 'red' | 'yellow' | 'cyan']> = {
  added: ['A', 'green'],
  deleted: ['D', 'red'],
  modified: ['M', 'yellow'],
  mode: ['M', 'yellow'],
  typechange: ['T', 'cyan'],
}

function mark(status: Change['status']): string {
  const [letter, colour] = MARK[status]
  return pc[colour](letter)
}

/** One line per change: status letter, path, what it was and became. */
export function formatChanges(changes: Change[]): string {
  return changes
    .map((c) => {
      const side = (e: Change['old']) =>
        !e ? '' : e.type === 'symlink' ? `-> ${quotePath(e.target ?? '')}` : e.type === 'dir' ? 'dir' : `${formatBytes(e.size)}${e.mode === 0o755 ? ' +x' : ''}`
      const detail = c.old && c.new ? `${side(c.old)} => ${side(c.new)}` : side(c.old ?? c.new)
      return `${mark(c.status)} ${quotePath(c.path)}${c.new?.type === 'dir' || (!c.new && c.old?.type === 'dir') ? '/' : ''}  ${pc.dim(detail)}`
    })
    .join('\n')
}

/** One line per item, or `empty` when there is none: a listing always says what it found. */
export function listLines<T>(items: readonly T[], line: (item: T) => string, empty: string): string {
  return items.length === 0 ? empty : items.map(line).join('\n')
}
