import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { digest, snapshotId } from '../schemas.js'
import { listLines, short } from '../text/format.js'

const tagName = z.string().min(1).describe('a tag name (release/v1 makes refs/tags/release/v1)')
const tagInfo = z.object({ name: z.string(), id: digest })

export const tag = defineOperation({
  name: 'tag',
  description: 'Point tag NAME at a snapshot (default HEAD); a tag already elsewhere moves only with force (else exit 3).',
  input: { name: tagName, id: snapshotId.optional(), force: z.boolean().optional().describe('move tag NAME if it exists (without: exit 3)') },
  output: tagInfo,
  annotations: { readOnly: false, destructive: false, idempotent: true },
  cli: { usage: 'tag [name] [id]', short: { force: 'f' }, rendering: { human: (t) => `${t.name} -> ${t.id}` } },
  async run(where, { name, id, force }) {
    const { createTag } = await import('../../store/tags.js')
    return createTag({ ...where, name, force: force ?? false, ...(id ? { id } : {}) })
  },
})

export const tagList = defineOperation({
  name: 'tag_list',
  description: 'List the tags, each with the snapshot it points at.',
  input: {},
  output: z.object({ tags: z.array(tagInfo) }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { usage: 'tag [name] [id]', withoutArguments: true, rendering: { human: (r) => listLines(r.tags, (t) => `${t.name}\t${short(t.id)}`, 'no tags') } },
  async run(where) {
    const { listTags } = await import('../../store/tags.js')
    return { tags: await listTags(where) }
  },
})

export const tagDelete = defineOperation({
  name: 'tag_delete',
  description: 'Delete tag NAME (what only it kept goes at the next gc, once its reflog entry expires).',
  input: { name: tagName },
  output: z.object({ deleted: z.string() }),
  annotations: { readOnly: false, destructive: true, idempotent: false },
  cli: { usage: 'tag [name] [id]', selectedBy: { flag: 'delete', short: 'd' }, rendering: { human: (r) => `deleted tag ${r.deleted}` } },
  async run(where, { name }) {
    const { deleteTag } = await import('../../store/tags.js')
    await deleteTag({ ...where, name })
    return { deleted: name }
  },
})
