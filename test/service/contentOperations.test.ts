import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { snapshotWorkspace } from '../../src/index.js'
import { runOperation } from '../../src/operations/runOperation.js'
import { OPERATIONS, findOperation } from '../../src/operations/table.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** An operation as HTTP and MCP call it: arguments checked against the table's schema, then run. */
async function operation(name: 'diff' | 'show' | 'checkout', dir: string, args: object): Promise<Record<string, unknown>> {
  const policy = { workspace: dir, store: join(dir, '.forkpoint'), allowPaths: [], allowRemotes: [] }
  return (await runOperation(findOperation(OPERATIONS, name)!, { dir }, args, { signal: new AbortController().signal, policy, env: {} })) as Record<string, unknown>
}

describe('contents through the operation table (HTTP and MCP)', () => {
  it('diff with patch, show ID:PATH and checkout with paths', async () => {
    const { dir } = await storeWorkspace({ 'index.js': 'one\n', 'b.txt': 'b1\n' })
    const first = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'index.js'), 'two\n')
    await fs.writeFile(join(dir, 'b.txt'), 'b2\n')
    const second = await snapshotWorkspace({ dir })
    const diff = await operation('diff', dir, { a: first.id, b: second.id, patch: true })
    expect(diff['patchTruncated']).toBe(false)
    expect(diff['patch']).toContain('diff --git a/index.js b/index.js')
    expect(diff['patch']).toContain('@@ -1 +1 @@\n-one\n+two\n')
    expect(await operation('show', dir, { id: `${first.id}:index.js` })).toMatchObject({ kind: 'file', text: 'one\n' })
    expect(await operation('checkout', dir, { id: first.id, paths: ['index.js'] })).toMatchObject({ mode: 'paths', paths: ['index.js'] })
    expect(await fs.readFile(join(dir, 'index.js'), 'utf8')).toBe('one\n')
    expect(await fs.readFile(join(dir, 'b.txt'), 'utf8')).toBe('b2\n')
  })
})
