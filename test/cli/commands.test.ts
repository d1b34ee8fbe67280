import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { initCommand } from '../../src/cli/commands/init.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { fpJson } from '../helpers/cli.js'
import { makeWorkspace } from '../helpers/tmp.js'
import { callOperation, renderingOf } from '../helpers/callOperation.js'

/** What `forkpoint ARGS --json` prints, without the schemaVersion the formatter adds. */
async function printed(dir: string, ...args: string[]): Promise<unknown> {
  const { json } = await fpJson(dir, ...args)
  const { schemaVersion, ...data } = json
  expect(schemaVersion).toBe(1)
  return data
}

describe('CLI commands are functions that return data', () => {
  it('each returns exactly the document its --json prints (the formatter adds only schemaVersion)', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'one\n', 'b/c.txt': 'c' })
    await initCommand({ dir })
    const first = await snapshotAgent({ dir, message: 'first', tag: 'v1' })
    await fs.writeFile(join(dir, 'a.txt'), 'two\n')
    const second = await snapshotAgent({ dir, message: 'second' })
    await fs.writeFile(join(dir, 'new.txt'), 'new')
    expect(await printed(dir, 'status')).toEqual(await callOperation('status', { dir }))
    expect(await printed(dir, 'log')).toEqual(await callOperation('log', { dir }))
    expect(await printed(dir, 'log', 'v1')).toEqual(await callOperation('log', { dir, ref: 'v1' }))
    expect(await printed(dir, 'show', 'HEAD')).toEqual(await callOperation('show', { dir, id: 'HEAD' }))
    expect(await printed(dir, 'diff', 'v1')).toEqual(await callOperation('diff', { dir, a: 'v1' }))
    expect(await printed(dir, 'tag')).toEqual(await callOperation('tag_list', { dir }))
    expect(await printed(dir, 'verify')).toEqual(await callOperation('verify', { dir }))
    expect(await printed(dir, 'gc', '--dry-run')).toEqual(await callOperation('gc', { dir, dryRun: true }))
    expect(first).toMatchObject({ created: true, parents: [] })
    expect(second).toMatchObject({ created: true, parents: [first.id] })
  })

  it('return typed data a program uses as it is: ids, changes, tags, and what the view makes of it', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'one\n' })
    expect(await initCommand({ dir })).toMatchObject({ created: true, storeDir: join(dir, '.forkpoint') })
    const { id } = await snapshotAgent({ dir, message: 'first' })
    expect(await callOperation('status', { dir })).toMatchObject({ clean: true, head: id, changes: [] })
    await fs.writeFile(join(dir, 'a.txt'), 'two\n')
    const diff = await callOperation('diff', { dir, a: 'HEAD' })
    expect(diff).toMatchObject({ a: id, b: null, changes: [{ path: 'a.txt', status: 'modified' }] })
    expect(renderingOf('diff').exit!(diff)).toBe(1)
    expect(await callOperation('tag', { dir, name: 'v1' })).toEqual({ name: 'v1', id })
    expect(await callOperation('tag_list', { dir })).toEqual({ tags: [{ name: 'v1', id }] })
    expect(await callOperation('tag_delete', { dir, name: 'v1' })).toEqual({ deleted: 'v1' })
    const verified = await callOperation('verify', { dir })
    expect(verified).toMatchObject({ ok: true, problems: [] })
    expect(renderingOf('verify').exit!(verified)).toBe(0)
    expect((await callOperation<{ entries: Array<{ id: string }> }>('log', { dir, limit: 1 })).entries.map((e) => e.id)).toEqual([id])
  })
})
