import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MachineInfo, type PushResult, UsageError, bootMachine, cloneImage, forkMachine, killMachine, pullImage, pushImage, snapshotMachine } from '../../src/index.js'
import { MACHINE_TIMEOUT, execOrHang, heartbeatDaemon, killAllMachines, machineWorkspace, pollFor, qemuProcessesNaming } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * A machine snapshot travels as an image: pushed to a registry, cloned into another store
 * and forked there, continuing from its instant; a second snapshot of the same machine
 * pushed to the same tag sends only the pieces that changed.
 */
let dir: string
let clone: string
let machine: MachineInfo
let first: { image: string; push: PushResult }
const remote = () => `file://${registry}:machine`
let registry: string
const secret = randomBytes(8).toString('hex')

beforeAll(async () => {
  dir = await machineWorkspace('machine-push')
  registry = tempDir('machine-registry')
  clone = join(tempDir('machine-clone'), 'c')
  const image = await sharedMachineImage(dir, 'busybox')
  machine = await bootMachine({ dir, image })
  await execOrHang({ dir, machine: machine.id, command: `${heartbeatDaemon(secret)}\necho first > /data/note; sync` })
  await pollFor('the daemon', async () => ((await execOrHang({ dir, machine: machine.id, command: 'cat /tmp/heartbeat' })).stdout === `${secret}\n` ? true : undefined))
  const snap = await snapshotMachine({ dir, machine: machine.id })
  first = { image: snap.image, push: await pushImage({ dir, id: snap.image, remote: remote() }) }
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
  if (clone) await killAllMachines(clone)
}, MACHINE_TIMEOUT)

/** Fork one child in `where` and show what it holds: the parent's memory-only value (written anew after the fork) and its disk. */
async function forkAndLook(where: string, image: string): Promise<{ heartbeat: string; note: string }> {
  const [child] = await forkMachine({ dir: where, image, n: 1, trustMachine: true })
  try {
    await execOrHang({ dir: where, machine: child!.id, command: 'rm /tmp/heartbeat' })
    const heartbeat = await pollFor(
      'the daemon in the clone',
      async () => (await execOrHang({ dir: where, machine: child!.id, command: 'cat /tmp/heartbeat' })).stdout || undefined,
    )
    const note = (await execOrHang({ dir: where, machine: child!.id, command: 'cat /data/note' })).stdout
    return { heartbeat, note }
  } finally {
    await killMachine({ dir: where, machine: child!.id })
  }
}

describe('a machine snapshot in a registry', { timeout: MACHINE_TIMEOUT }, () => {
  it('is pushed whole: the RAM and disk pieces, the device state, the kernel and initramfs', () => {
    expect(first.push).toMatchObject({ id: first.image, tag: 'machine', continued: false })
    expect(first.push.sentObjects).toBe(first.push.objects)
    // at least the RAM the guest touched (tens of MB of pieces, compressed) travelled
    expect(first.push.totalBytes).toBeGreaterThan(20e6)
  })

  it('is cloned into another store and forked there, continuing from its instant', async () => {
    const cloned = await cloneImage({ remote: remote(), into: clone })
    expect(cloned.id).toBe(first.image)
    // the device state came from another store: refused before any QEMU starts, unless trusted
    const untrusted = await forkMachine({ dir: clone, image: first.image, n: 1 }).catch((e: unknown) => e)
    expect(untrusted).toBeInstanceOf(UsageError)
    expect(untrusted).toMatchObject({ exitCode: 2, message: expect.stringMatching(/came from another store.*--trust-machine/) })
    expect(qemuProcessesNaming(clone)).toEqual([])
    expect(await forkAndLook(clone, first.image)).toEqual({ heartbeat: `${secret}\n`, note: 'first\n' })
  })

  it('sends only the changed pieces for a second snapshot of the same machine, and a pull fetches only those', async () => {
    await execOrHang({ dir, machine: machine.id, command: 'echo second > /data/note; sync' })
    const second = await snapshotMachine({ dir, machine: machine.id })
    const push = await pushImage({ dir, id: second.image, remote: remote() })
    expect(push.objects).toBeGreaterThan(first.push.objects) // the whole image: both snapshots, the first one its parent
    expect(push.sentObjects).toBeLessThan(first.push.sentObjects / 2)
    expect(push.sentBytes).toBeLessThan(first.push.sentBytes / 2)
    const pulled = await pullImage({ dir: clone, remote: remote() })
    expect(pulled.id).toBe(second.image)
    expect(pulled.fetchedObjects).toBeLessThan(pulled.objects / 2)
    expect(await forkAndLook(clone, second.image)).toEqual({ heartbeat: `${secret}\n`, note: 'second\n' })
  })
})
