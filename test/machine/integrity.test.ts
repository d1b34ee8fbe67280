import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Digest,
  DigestMismatchError,
  type MachineLayer,
  MachineNotFoundError,
  MalformedObjectError,
  Store,
  UsageError,
  bootMachine,
  buildMachineImage,
  diffMachines,
  forkMachine,
  killMachine,
  listMachines,
  restoreMachine,
  snapshotAgent,
  snapshotMachine,
} from '../../src/index.js'
import { ZERO_PIECE_DIGEST } from '../../src/machine/filePieces.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { EMPTY_TREE } from '../../src/world/tree/treeSource.js'
import { MACHINE_TIMEOUT, execOrHang, killAllMachines, machineWorkspace, qemuProcessesNaming } from '../helpers/machines.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * What a fork refuses before QEMU sees anything: a stored piece of RAM or a device state
 * whose bytes no longer match their digest (exit 5), a machine layer with a field out of
 * place (exit 5), and bad input (exit 2). One machine is booted and snapshotted, then killed:
 * every fork here starts from that snapshot's stored objects.
 */
let dir: string
let store: Store
let image: Digest
let snapImage: Digest
let layerId: Digest
let layer: MachineLayer

interface Chunks {
  kind: 'chunks'
  chunks: Array<{ blob: Digest; size: number }>
}

beforeAll(async () => {
  dir = await machineWorkspace('machine-integrity')
  image = await sharedMachineImage(dir, 'busybox')
  const m = await bootMachine({ dir, image })
  await execOrHang({ dir, machine: m.id, command: 'echo kept > /data/kept' })
  snapImage = (await snapshotMachine({ dir, machine: m.id })).image
  await killMachine({ dir, machine: m.id })
  store = await Store.open(join(dir, '.forkpoint'))
  layerId = (await readSnapshot(store, snapImage)).machine!
  layer = (await store.readObject(layerId)) as unknown as MachineLayer
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

/** The snapshot's files written out of the store for forks: removed, so the next fork reads (and checks) the stored objects. */
function dropMaterialized(): void {
  rmSync(join(dir, '.forkpoint', 'machines', '.snapshots'), { recursive: true, force: true })
}

/** Flip a byte in the middle of a stored object's file for the length of `use`, then put it back. */
async function withCorrupted<T>(digest: Digest, use: () => Promise<T>): Promise<T> {
  const path = store.objectPath(digest)
  const original = readFileSync(path)
  const bad = Buffer.from(original)
  const at = bad.length >> 1
  bad[at] = bad[at]! ^ 0xff
  writeFileSync(path, bad)
  try {
    return await use()
  } finally {
    writeFileSync(path, original)
  }
}

/** Machines of the store, and QEMUs naming its folder: what a refused fork must not leave. */
async function leftovers(): Promise<{ listed: string[]; folders: string[]; qemus: number[] }> {
  const machines = join(dir, '.forkpoint', 'machines')
  return {
    listed: (await listMachines({ dir })).map((m) => m.id),
    folders: existsSync(machines) ? readdirSync(machines).filter((n) => /^m[0-9a-f]{8}$/.test(n)) : [],
    qemus: qemuProcessesNaming(join(dir, '.forkpoint')),
  }
}

const nothingLeft = { listed: [], folders: [], qemus: [] }

/** A snapshot image whose machine layer is the real one with `change` applied. */
async function imageWithLayer(change: Record<string, unknown>): Promise<Digest> {
  const bad = await store.writeBlob(canonicalBytes({ ...layer, ...change }))
  const snapshot = makeSnapshot({ parents: [], tree: await store.writeBlob(canonicalBytes(EMPTY_TREE)), message: 'tampered', layers: { machine: bad } })
  return store.writeBlob(canonicalBytes(snapshot))
}

describe('a fork refuses stored state that changed', { timeout: MACHINE_TIMEOUT }, () => {
  it('refuses a RAM piece whose bytes do not match its digest (exit 5), before any QEMU starts', async () => {
    const memory = (await store.readObject(layer.memory)) as unknown as Chunks
    const piece = memory.chunks.find((c) => c.blob !== ZERO_PIECE_DIGEST && memory.chunks.filter((o) => o.blob === c.blob).length === 1)!
    expect(piece).toBeDefined()
    dropMaterialized()
    const err = await withCorrupted(piece.blob, () => forkMachine({ dir, image: snapImage, n: 2 }).catch((e: unknown) => e))
    expect(err).toBeInstanceOf(DigestMismatchError)
    expect(err).toMatchObject({ exitCode: 5 })
    expect(await leftovers()).toEqual(nothingLeft)
    expect(existsSync(join(dir, '.forkpoint', 'machines', '.snapshots', layerId.slice('sha256:'.length)))).toBe(false)
  })

  it('refuses a device state whose bytes do not match its digest (exit 5), restore too', async () => {
    dropMaterialized()
    const err = await withCorrupted(layer.devices, () => forkMachine({ dir, image: snapImage, n: 1 }).catch((e: unknown) => e))
    expect(err).toBeInstanceOf(DigestMismatchError)
    expect(err).toMatchObject({ exitCode: 5 })
    const viaRestore = await withCorrupted(layer.devices, () => restoreMachine({ dir, image: snapImage }).catch((e: unknown) => e))
    expect(viaRestore).toMatchObject({ exitCode: 5 })
    expect(await leftovers()).toEqual(nothingLeft)
  })

  it('forks from the same objects once they are whole again (what failed was the corruption)', async () => {
    dropMaterialized()
    const [child] = await forkMachine({ dir, image: snapImage, n: 1 })
    try {
      expect((await execOrHang({ dir, machine: child!.id, command: 'cat /data/kept' })).stdout).toBe('kept\n')
    } finally {
      await killMachine({ dir, machine: child!.id })
    }
    expect(await leftovers()).toEqual(nothingLeft)
  })

  it('refuses a machine layer with a field out of place (exit 5)', async () => {
    for (const change of [
      { accelerator: 'hvf' },
      { memoryMiB: 0 },
      { memoryMiB: 1.5 },
      { diskBytes: -1 },
      { memory: 'not a digest' },
      { kind: 'machine-image' },
      { qemuVersion: 7 },
    ]) {
      const err = await forkMachine({ dir, image: await imageWithLayer(change), n: 1 }).catch((e: unknown) => e)
      expect(err, JSON.stringify(change)).toBeInstanceOf(MalformedObjectError)
      expect(err, JSON.stringify(change)).toMatchObject({ exitCode: 5 })
    }
    expect(await leftovers()).toEqual(nothingLeft)
  })

  it('refuses a machine saved by another QEMU or on another accelerator (exit 2): its device state would not load', async () => {
    for (const change of [{ qemuVersion: '1.0.0' }, { accelerator: layer.accelerator === 'tcg' ? 'kvm' : 'tcg' }]) {
      const err = await forkMachine({ dir, image: await imageWithLayer(change), n: 1 }).catch((e: unknown) => e)
      expect(err, JSON.stringify(change)).toBeInstanceOf(UsageError)
      expect(err, JSON.stringify(change)).toMatchObject({ exitCode: 2 })
    }
    expect(await leftovers()).toEqual(nothingLeft)
  })
})

describe('bad input', { timeout: MACHINE_TIMEOUT }, () => {
  it('refuses to fork an image without a machine layer (exit 2)', async () => {
    const plain = await snapshotAgent({ dir, message: 'no machine here', allowEmpty: true })
    const err = await forkMachine({ dir, image: plain.id, n: 1 }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect(err).toMatchObject({ exitCode: 2, message: expect.stringMatching(/no machine layer/) })
    expect(await diffMachines({ dir, a: plain.id, b: snapImage }).catch((e: unknown) => e)).toMatchObject({ exitCode: 2 })
  })

  it('refuses a count of children that is not a whole number from 1 (exit 2)', async () => {
    for (const n of [0, -1, 1.5, 65, Number.NaN]) {
      const err = await forkMachine({ dir, image: snapImage, n }).catch((e: unknown) => e)
      expect(err, String(n)).toBeInstanceOf(UsageError)
      expect(err, String(n)).toMatchObject({ exitCode: 2 })
    }
    expect(await leftovers()).toEqual(nothingLeft)
  })

  it('refuses bad boot sizes (exit 2)', async () => {
    for (const o of [{ memoryMiB: 0 }, { memoryMiB: 1 << 20 }, { diskMiB: 1 }, { memoryMiB: 12.5 }]) {
      expect(await bootMachine({ dir, image, ...o }).catch((e: unknown) => e), JSON.stringify(o)).toMatchObject({ exitCode: 2 })
    }
    expect(await leftovers()).toEqual(nothingLeft)
  })

  it('says an unknown machine id is not found (exit 2), for exec, snapshot, stats and kill alike', async () => {
    for (const machine of ['m00000000', 'nonsense', '../../etc']) {
      const err = await execOrHang({ dir, machine, command: 'true' }).catch((e: unknown) => e)
      expect(err, machine).toBeInstanceOf(MachineNotFoundError)
      expect(err, machine).toMatchObject({ exitCode: 2, data: { machine } })
    }
    expect(await snapshotMachine({ dir, machine: 'm00000000' }).catch((e: unknown) => e)).toBeInstanceOf(MachineNotFoundError)
    expect(await killMachine({ dir, machine: 'm00000000' }).catch((e: unknown) => e)).toBeInstanceOf(MachineNotFoundError)
  })

  it('refuses an unknown recipe (exit 2) and stores nothing', async () => {
    const before = (await listMachines({ dir })).length
    const err = await buildMachineImage({ dir, recipe: 'ubuntu' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect(err).toMatchObject({ exitCode: 2, message: expect.stringMatching(/busybox/) })
    expect((await listMachines({ dir })).length).toBe(before)
  })
})
