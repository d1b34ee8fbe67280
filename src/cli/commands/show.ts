import { once } from 'node:events'
import type { Command } from 'commander'
import type { Shown } from '../../image/showSpec.js'
import { looksBinary } from '../../world/diff/looksBinary.js'
import { quotePath } from '../../world/diff/quotePath.js'
import type { ShownFile } from '../../world/diff/showPath.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatBytes } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { renderImage } from '../../operations/text/renderImage.js'

/** `forkpoint show ID` or `show ID:PATH`: an image layer by layer, a file or directory of one, any other object as it is stored. */
export async function showCommand({ id, ...where }: Where & { id: string }): Promise<Shown> {
  const { showSpec } = await import('../../image/showSpec.js')
  return showSpec({ ...where, id })
}

/** What holds bytes to print as they are: a blob, a file or a symlink of an image. */
function bytesOf(r: Shown): Pick<ShownFile, 'kind' | 'content' | 'chunked' | 'target'> | null {
  if ('chunked' in r) return r
  return r.kind === 'blob' && !('object' in r) ? { kind: 'file', content: r.id, chunked: false } : null
}

export const showView: Rendering<Shown> = {
  human(r) {
    if (r.kind === 'snapshot' && 'world' in r) return renderImage(r)
    if ('total' in r) {
      const names = r.entries.map((e) => `${quotePath(e.name)}${e.type === 'dir' ? '/' : ''}`)
      return [...names, ...(r.total > r.entries.length ? [`… and ${r.total - r.entries.length} more`] : [])].join('\n')
    }
    if ('chunked' in r) return `${r.kind} ${quotePath(r.path)} of ${r.id} (${formatBytes(r.size)}, mode ${r.mode.toString(8)})`
    return 'object' in r ? `${r.kind} ${r.id}\n${JSON.stringify(r.object, null, 2)}` : `blob ${r.id} (${formatBytes(r.size)})`
  },
  notes: (r) => (bytesOf(r) ? ['binary content is not written to a terminal: redirect stdout to get its bytes'] : []),
}

/** A blob's or file's bytes on stdout as stored, piece by piece; false (nothing written) when they are binary and stdout is a terminal. */
async function writeContent(where: Where, file: NonNullable<ReturnType<typeof bytesOf>>): Promise<boolean> {
  const { fileContent } = await import('../../world/diff/showPath.js')
  let first = true
  for await (const piece of fileContent({ ...where, file })) {
    if (first && process.stdout.isTTY && looksBinary(piece)) return false
    first = false
    if (!process.stdout.write(piece)) await once(process.stdout, 'drain')
  }
  return true
}

export function registerShow(program: Command): void {
  common(program.command('show <ID>'))
    .description(
      'show an object: an image layer by layer (world, env, trace, other layers), ID:PATH a file (its bytes) or directory (its names) of an image, a blob (its bytes), a tree, run, ... (ids may be short)',
    )
    .action(async (id: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const where = { dir: flags.dir, ...(flags.store ? { store: flags.store } : {}) }
      const result = await showCommand({ ...where, id })
      const file = flags.json ? null : bytesOf(result)
      if (file && (await writeContent(where, file))) return
      print(flags, result, showView)
    })
}
