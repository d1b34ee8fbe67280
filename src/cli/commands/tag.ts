import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import type { TagInfo } from '../../store/tags.js'
import { type Where, common, commonFlags } from '../context.js'
import { listLines, short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'

/** `forkpoint tag`: every tag. */
export async function tagListCommand(where: Where): Promise<{ tags: TagInfo[] }> {
  const { listTags } = await import('../../store/tags.js')
  return { tags: await listTags(where) }
}

/** `forkpoint tag NAME [ID]`: tag NAME pointed at ID (default HEAD); an existing tag moves only with `force` (else exit 3). */
export async function tagCommand({ name, id, force, ...where }: Where & { name: string; id?: string; force?: boolean }): Promise<TagInfo> {
  const { createTag } = await import('../../store/tags.js')
  return createTag({ ...where, name, force: force ?? false, ...(id ? { id } : {}) })
}

/** `forkpoint tag -d NAME`: tag NAME deleted. */
export async function tagDeleteCommand({ name, ...where }: Where & { name: string }): Promise<{ deleted: string }> {
  const { deleteTag } = await import('../../store/tags.js')
  await deleteTag({ ...where, name })
  return { deleted: name }
}

export const tagListView: Rendering<{ tags: TagInfo[] }> = { human: (r) => listLines(r.tags, (t) => `${t.name}\t${short(t.id)}`, 'no tags') }
export const tagView: Rendering<TagInfo> = { human: (t) => `${t.name} -> ${t.id}` }
export const tagDeleteView: Rendering<{ deleted: string }> = { human: (r) => `deleted tag ${r.deleted}` }

export function registerTag(program: Command): void {
  common(program.command('tag [NAME] [ID]'))
    .description('list tags, or point tag NAME at ID (default HEAD)')
    .option('-d, --delete', 'delete tag NAME')
    .option('-f, --force', 'move tag NAME if it exists (without: exit 3)')
    .action(async (name: string | undefined, id: string | undefined, opts: { delete?: boolean; force?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const where = { dir: flags.dir, store: flags.store }
      if (!name) print(flags, await tagListCommand(where), tagListView)
      else if (opts.delete) {
        if (id) throw new UsageError('tag --delete takes only a name')
        print(flags, await tagDeleteCommand({ ...where, name }), tagDeleteView)
      } else print(flags, await tagCommand({ ...where, name, id, force: opts.force }), tagView)
    })
}
