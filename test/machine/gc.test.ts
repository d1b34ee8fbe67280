import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type MachineImage, Store, bootMachine, buildMachineImage, forkMachine, gc, killMachine, snapshotMachine } from '../../src/index.js'
import { deleteRef, listRefs } from '../../src/store/refs.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { MACHINE_TIMEOUT, execOrHang, killAllMachines, machineWorkspace } from '../helpers/machines.js'

let dir: string

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

describe('gc and machines', { timeout: MACHINE_TIMEOUT }, () => {
  it('keeps what a built image, a running machine and its snapshots need, and lets go of a machine once it is killed', async () => {
    dir = await machineWorkspace('machine-gc')
    const store = await Store.open(join(dir, '.forkpoint'))
    const { image } = await buildMachineImage({ dir, recipe: 'busybox' })
    expect((await listRefs(store, 'refs/machine-images/')).map((r) => r.id)).toEqual([image])

    const m = await bootMachine({ dir, image })
    await deleteRef(store, 'refs/machine-images/busybox') // as a rebuild moving the ref would leave it
    await gc({ dir, prune: 'now' })
    const built = (await store.readObject(image)) as unknown as MachineImage
    for (const blob of [built.kernel, built.initrd]) expect(await store.has(blob)).toBe(true)

    await execOrHang({ dir, machine: m.id, command: 'echo kept > /data/kept' })
    const snap = await snapshotMachine({ dir, machine: m.id })
    await killMachine({ dir, machine: m.id })
    expect(await listRefs(store, 'refs/machines/')).toEqual([])
    await gc({ dir, prune: 'now' })

    // the snapshot, on refs/heads/machines/<id>, is whole: a fork reads every piece from the store again
    const layer = (await readSnapshot(store, snap.image)).machine!
    expect(await store.has(layer)).toBe(true)
    rmSync(join(dir, '.forkpoint', 'machines', '.snapshots'), { recursive: true, force: true })
    const [child] = await forkMachine({ dir, image: snap.image, n: 1 })
    expect((await execOrHang({ dir, machine: child!.id, command: 'cat /data/kept' })).stdout).toBe('kept\n')
    await killMachine({ dir, machine: child!.id })
  })
})
