import { z } from 'zod'
import { quotePath } from '../../world/diff/quotePath.js'
import { counted } from '../../util/plural.js'
import { defineOperation } from '../operation.js'
import { digest, snapshotId } from '../schemas.js'
import { short } from '../text/format.js'
import { heldBackLines } from '../text/heldBackLines.js'

const written = {
  id: digest,
  target: z.string(),
  changed: z.number().describe('paths written or removed (in place), files written (into), paths restored (paths)'),
  files: z.number(),
  method: z.enum(['reflink', 'copy', 'hardlink']),
  heldBack: z.array(z.string()).describe('files of an image from another store not written, as git would run them (trustGit writes them)'),
}
const checkedOut = z.object({ ...written, tree: digest, mode: z.enum(['into', 'in-place']) })
const restored = z.object({ ...written, mode: z.literal('paths'), paths: z.array(z.string()) })

export const checkout = defineOperation({
  name: 'checkout',
  description:
    "Put a snapshot's files in the workspace and move HEAD to it; refuses to overwrite uncommitted changes unless force. With paths, restores only those files or directories from it (over uncommitted changes, as git checkout ID -- PATH does) and HEAD stays.",
  input: {
    id: snapshotId,
    paths: z.array(z.string().min(1)).min(1).optional().describe('restore only these paths (relative to the workspace)'),
    force: z.boolean().optional().describe('discard uncommitted changes'),
    into: z.string().min(1).optional().describe('a new or empty directory to write it into, instead of the workspace'),
    allowExternalSymlinks: z.boolean().optional().describe('allow symlinks that point outside the tree'),
    trustGit: z.boolean().optional().describe("write an image from another store's .git/config, .git/hooks/ and .git files (held back otherwise)"),
  },
  local: { fields: ['into', 'allowExternalSymlinks', 'trustGit'], why: "they write outside the workspace, or what runs code on the caller's next git command" },
  output: z.union([checkedOut, restored]),
  annotations: { readOnly: false, destructive: true, idempotent: true },
  cli: {
    usage: 'checkout <id> [paths...]',
    short: { force: 'f' },
    progress: { label: 'checkout' },
    rendering: {
      human: (r) =>
        r.mode === 'paths'
          ? `restored ${r.paths.map(quotePath).join(', ')} from ${short(r.id)} (${counted(r.changed, 'path')} changed, HEAD unchanged)${heldBackLines(r.heldBack, 'forkpoint checkout ID --trust-git -- PATH…')}`
          : `checked out ${short(r.id)} into ${r.target} (${counted(r.files, 'file')}${r.mode === 'in-place' ? `, ${counted(r.changed, 'path')} changed` : ''}, ${r.method})${heldBackLines(r.heldBack, 'forkpoint checkout ID --trust-git')}`,
    },
  },
  async run(where, { id, paths, force, ...local }, { onProgress }) {
    const progress = onProgress && ((done: number, total: number) => onProgress({ done, total }))
    const options = { ...where, id, force: force ?? false, ...local, ...(progress ? { onProgress: progress } : {}) }
    if (paths?.length) {
      const { checkoutPaths } = await import('../../world/checkout/restorePaths.js')
      return checkoutPaths({ ...options, paths })
    }
    const { checkout } = await import('../../world/checkout/checkout.js')
    return checkout(options)
  },
})
