import { describe, expect, it } from 'vitest'
import { Store, verify, gc } from '../../src/index.js'
import { sha256 } from '../../src/objects/digest.js'
import { updateRef } from '../../src/store/refs.js'
import { objectEdges } from '../../src/objects/kinds.js'
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

  describe('text of the user’s that reads like a digest is not an edge', () => {
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((x) => sha256(x))
    it('in a tree: a file’s name and a link’s target; its blobs, chunks and subtrees are', () => {
      const tree = {
        kind: 'tree',
        schemaVersion: 1,
        entries: [
          { name: a, type: 'file', mode: 0o644, size: 1, blob: b },
          { name: 'big', type: 'file', mode: 0o644, size: 9, chunks: c },
          { name: 'sub', type: 'dir', mode: 0o755, size: 0, tree: d },
          { name: 'link', type: 'symlink', mode: 0o777, size: 71, target: a },
        ],
      }
      expect(objectEdges(tree)).toEqual([b, c, d])
    })
    it('in a snapshot: its message, agent and env; its parents, tree, layers and fields from a newer writer are', () => {
      const snapshot = {
        kind: 'snapshot',
        schemaVersion: 1,
        parents: [b],
        world: { tree: c, env: { BASE_IMAGE: a } },
        trace: d,
        futureLayer: sha256('e'),
        meta: { message: a, agent: a, createdAt: '2026-11-27T00:00:00.000Z', fork: { of: b, index: 0 } },
      }
      expect(new Set(objectEdges(snapshot))).toEqual(new Set([b, c, d, sha256('e')]))
    })
    it('in a ledger: an idempotency key; its arguments and results are', () => {
      const entry = {
        seq: 0,
        prev: '0'.repeat(64),
        at: '2026-11-27T00:00:00.000Z',
        tool: a,
        argsHash: b,
        idempotencyKey: a,
        class: 'irreversible',
        status: 'executed',
        resultHash: c,
      }
      const ledger = { kind: 'ledger', schemaVersion: 1, chain: { alg: 'sha256' }, entries: [entry], head: '1'.repeat(64) }
      expect(objectEdges(ledger)).toEqual([b, c])
    })
    it('in a LangGraph checkpoint log: a namespace, a channel, a checkpoint id; the previous step and the value blobs are', () => {
      const entry = {
        op: 'put',
        ns: a,
        id: a,
        parent: a,
        checkpoint: { type: 'json', blob: b },
        metadata: { type: 'json', blob: c },
        values: [{ channel: a, version: a, value: { type: 'json', blob: d } }],
      }
      const log = { kind: 'checkpoint-log', schemaVersion: 1, framework: 'langgraph', previous: a, entry }
      expect(objectEdges(log)).toEqual([a, b, c, d])
    })
  })
})
