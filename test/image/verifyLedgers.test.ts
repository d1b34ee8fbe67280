import { describe, expect, it } from 'vitest'
import { type Digest, openEffects, snapshotWorkspace, type Store, verifyLedgers } from '../../src/index.js'
import { updateRef } from '../../src/store/refs.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import type { Ledger } from '../../src/objects/Ledger.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { fp } from '../helpers/cli.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** A workspace whose HEAD image carries a ledger of three sent mails. */
async function imageWithLedger(): Promise<{ dir: string; store: Store; head: Digest; ledger: Digest }> {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'hi\n' })
  const effects = await openEffects({ store, env: {} })
  const send = effects.tool('email.send', async (m: { to: string }) => ({ sent: m.to }), { class: 'irreversible', key: (m) => `mail:${m.to}` })
  for (const to of ['a@x', 'b@x', 'c@x']) await send({ to })
  const ledger = await effects.ledger()
  const head = (await snapshotAgent({ dir, effects: ledger, trace: false })).id
  return { dir, store, head, ledger }
}

describe('verify checks every image ledger', () => {
  it('passes whole ledgers, and exits 5 naming a tampered one kept only in history', async () => {
    const { dir, store, head, ledger } = await imageWithLedger()
    expect(await verifyLedgers({ store, env: {} })).toEqual({ checked: 1, unkeyed: [], problems: [] })
    expect((await fp(dir, 'verify')).code).toBe(0)

    // an image whose ledger had its chain broken, then a later image on top of it (the bad one is history)
    const broken = structuredClone(await store.readObject<Ledger>(ledger, 'ledger'))
    broken.entries[1]!.prev = 'f'.repeat(64)
    const bad = await store.writeObject(broken)
    const hostile = await store.writeObject({ ...(await readSnapshot(store, head)), parents: [head], effects: bad })
    await updateRef({ store, name: 'refs/heads/main', id: hostile, message: 'test' })
    const later = await snapshotWorkspace({ dir, allowEmpty: true, message: 'later' })
    expect((await readSnapshot(store, later.id)).effects).toBe(bad)

    const result = await verifyLedgers({ store, env: {} })
    expect(result.problems).toEqual([expect.objectContaining({ ledger: bad, reason: 'chain' })])
    const cli = await fp(dir, 'verify')
    expect(cli.code).toBe(5)
    expect(cli.stdout).toContain(`tampered ledger: ${bad}`)
    expect(cli.stderr.trim().split('\n')).toHaveLength(1)
  })
})
