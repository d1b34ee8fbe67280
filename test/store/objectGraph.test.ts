import { describe, expect, it } from 'vitest'
import { Store, verify, gc } from '../../src/index.js'
import { sha256 } from '../../src/store/digest.js'
import { updateRef } from '../../src/store/refs.js'
import { walkGraph } from '../../src/store/objectGraph.js'
import { tempDir } from '../helpers/tmp.js'

describe('object graph', () => {
  it('follows digests inside structured objects and reports missing ones', async () => {
    const store = await Store.init(tempDir())
    const blob = await store.writeBlob(Buffer.from('kept'))
    const absent = sha256('never stored')
    const root = await store.writeObject({ kind: 'holder', schemaVersion: 1, nested: { list: [blob, absent] } })
    const walk = await walkGraph(store, [root])
    expect(walk.reachable.has(blob)).toBe(true)
    expect(walk.missing.get(absent)).toBe(root)
  })

  it('treats a recorded run as data: digests an agent mentioned are neither kept alive nor missing', async () => {
    const store = await Store.init(tempDir())
    const mentioned = await store.writeBlob(Buffer.from('an unrelated object'))
    const run = await store.writeObject({
      kind: 'run',
      schemaVersion: 1,
      steps: [{ idx: 0, name: 'tool', input: { image: mentioned }, output: { pulled: sha256('not in this store') } }],
    })
    await updateRef({ store, name: 'refs/runs/r1', id: run, message: 'run' })
    expect((await verify({ store })).ok).toBe(true)
    const result = await gc({ store })
    expect(result.removed).toContain(mentioned)
    expect(await store.has(run)).toBe(true)
  })
})
