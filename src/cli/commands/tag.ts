import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { short } from '../format.js'
import { emit } from '../output.js'

export function registerTag(program: Command): void {
  common(program.command('tag [NAME] [ID]'))
    .description('list tags, or point tag NAME at ID (default HEAD)')
    .option('-d, --delete', 'delete tag NAME')
    .option('-f, --force', 'move tag NAME if it exists (without: exit 3)')
    .action(async (name: string | undefined, id: string | undefined, opts: { delete?: boolean; force?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { createTag, deleteTag, listTags } = await import('../../store/tags.js')
      const { openStore } = await import('../../store/findStore.js')
      const { UsageError } = await import('../../errors/index.js')
      const { store } = await openStore({ dir: flags.dir, store: flags.store })
      if (!name) {
        const tags = await listTags({ store })
        emit(flags, { tags }, (r) => r.tags.map((t) => `${t.name}\t${short(t.id)}`).join('\n'))
      } else if (opts.delete) {
        if (id) throw new UsageError('tag --delete takes only a name')
        await deleteTag({ store, name })
        emit(flags, { deleted: name }, (r) => `deleted tag ${r.deleted}`)
      } else {
        const tag = await createTag({ store, name, force: opts.force ?? false, ...(id ? { id } : {}) })
        emit(flags, tag, (t) => `${t.name} -> ${t.id}`)
      }
    })
}
