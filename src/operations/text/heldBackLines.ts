import { quotePath } from '../../world/diff/quotePath.js'

/** What a checkout of another store's image (`from`), or a branch's commit, did not write, and the command that would. */
export function heldBackLines(heldBack: string[], restore: string, from = 'an image from another store'): string {
  if (heldBack.length === 0) return ''
  const shown = heldBack.slice(0, 20).map((p) => `\n  ${quotePath(p)}`)
  const more = heldBack.length > 20 ? `\n  … and ${heldBack.length - 20} more` : ''
  return `\nheld back (git config, hooks and .git files of ${from} run code on the next git command):${shown.join('')}${more}\n  to write them: ${restore}`
}
