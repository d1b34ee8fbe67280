import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Digest, openEffects, pullImage, pushImage, type Store, verify, verifyLedger, writeSafetensors } from '../../src/index.js'
import { storeModelDir } from '../../src/image/model/modelLayer.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { checkoutAgent } from '../../src/image/checkoutAgent.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { counted, tickingClock } from '../effects/fixtures.js'
import { tempDir } from '../helpers/tmp.js'
import { dirState, storeWorkspace } from '../helpers/workspace.js'
import { emptyStore } from '../registry/fixtures.js'
import { TRANSPORTS, useRemotes } from '../registry/remotes.js'

const remotes = useRemotes()
const TRANSCRIPT = '{"role":"user","content":"send the report"}\n{"role":"assistant","content":"sent"}\n'

/**
 * An image with every layer: files (an executable, a symlink), a transcript trace, an env,
 * a ledger with an executed effect, the model, cache and machine slots, and a layer of a
 * newer writer this version does not know.
 */
async function everyLayer(): Promise<{ store: Store; id: Digest }> {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n', 'bin/run': { content: '#!/bin/sh\n', mode: 0o755 }, link: { symlink: 'a.txt' } })
  await fs.writeFile(join(dir, 'chat.jsonl'), TRANSCRIPT)
  const effects = await openEffects({ store, env: {}, now: tickingClock() })
  await effects.tool('email.send', counted<{ to: string }>('sent').fn, { class: 'irreversible', key: (m) => `mail:${m.to}` })({ to: 'boss@x' })
  const adapter = tempDir('adapter')
  await fs.writeFile(join(adapter, 'adapter_model.safetensors'), writeSafetensors([{ name: 'w', dtype: 'F16', shape: [2], values: Float32Array.of(1, -2) }]))
  await fs.writeFile(join(adapter, 'adapter_config.json'), '{"r": 2}\n')
  const state = await store.writeObject({ kind: 'chunks', schemaVersion: 1, size: 0, chunks: [] })
  const layers = {
    model: await storeModelDir(store, adapter),
    cache: await store.writeObject({ kind: 'kv-cache', schemaVersion: 1, modelSha256: '0'.repeat(64), contextSize: 64, tokens: [1, 2], pending: [3], state }),
    machine: await store.writeObject({
      kind: 'machine',
      schemaVersion: 1,
      image: await store.writeObject({
        kind: 'machine-image',
        schemaVersion: 1,
        recipe: 'busybox',
        kernelRelease: '6.1.0-test',
        kernel: await store.writeBlob(Buffer.from('kernel')),
        initrd: await store.writeBlob(Buffer.from('initrd')),
        cmdline: 'console=ttyS0',
      }),
      memoryMiB: 16,
      memory: await store.writeObject({ kind: 'chunks', schemaVersion: 1, size: 4, chunks: [{ blob: await store.writeBlob(Buffer.from('ram!')), size: 4 }] }),
      devices: await store.writeBlob(Buffer.from('device state')),
      disk: await store.writeObject({ kind: 'chunks', schemaVersion: 1, size: 4, chunks: [{ blob: await store.writeBlob(Buffer.from('disk')), size: 4 }] }),
      diskBytes: 4,
      qemuVersion: '7.2.22',
      accelerator: 'tcg',
    }),
  }
  const made = await snapshotAgent({ dir, trace: 'chat.jsonl', env: { HOME: '/home/me' }, effects: await effects.ledger(), layers, message: 'every layer' })
  // a newer writer's layer: kept and carried though unknown
  const snapshot = { ...(await readSnapshot(store, made.id)), tools: await store.writeBlob(Buffer.from('tool registry')) }
  return { store, id: await store.writeObject(snapshot) }
}

describe('an image with every layer', () => {
  for (const kind of TRANSPORTS) {
    it(`comes back whole from a push and pull through ${kind === 'oci' ? 'a real docker-registry' : kind}`, async () => {
      const { store, id } = await everyLayer()
      const remote = remotes.remote(kind)
      await pushImage({ store, id, remote, credentials: null })
      const other = await emptyStore()
      expect((await pullImage({ store: other, remote, credentials: null })).id).toBe(id)
      const snapshot = await readSnapshot(other, id)
      for (const layer of ['trace', 'effects', 'model', 'cache', 'machine', 'tools'] as const) {
        const digest = snapshot[layer] as Digest
        expect(await other.readBlob(digest)).toEqual(await store.readBlob(digest))
      }
      await verifyLedger({ store: other, ledger: snapshot.effects!, env: {} })
      expect((await verify({ store: other })).ok).toBe(true)
      // every layer comes back out the same from either store
      const out = async (s: Store) => {
        const into = join(tempDir('agent'), 'out')
        await checkoutAgent({ store: s, id, into })
        return { into, state: await dirState(into, []) }
      }
      const { into, state: pulled } = await out(other)
      expect(pulled).toEqual((await out(store)).state)
      expect(await fs.readFile(join(into, 'trace.jsonl'), 'utf8')).toBe(TRANSCRIPT)
      expect(await fs.readFile(join(into, 'model', 'adapter_config.json'), 'utf8')).toBe('{"r": 2}\n')
      expect(
        Object.keys(pulled)
          .filter((p) => p.startsWith('layers/'))
          .sort(),
      ).toEqual(['layers/cache.json', 'layers/effects.json', 'layers/machine.json', 'layers/model.json', 'layers/tools.bin'])
    })
  }
})
