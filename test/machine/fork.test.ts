import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type MachineInfo,
  type MachineSnapshot,
  MachineNotFoundError,
  bootMachine,
  buildMachineImage,
  diffMachines,
  forkMachine,
  killMachine,
  listMachines,
  log,
  machineDoctor,
  machineStats,
  restoreMachine,
  snapshotMachine,
} from '../../src/index.js'
import { MACHINE_TIMEOUT, execOrHang, heartbeatDaemon, killAllMachines, machineWorkspace, pollFor, processAlive } from '../helpers/machines.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * One machine booted cold, a value left in the memory of one of its processes alone, a
 * snapshot, and three children forked from it: shared by the tests of this file (at most
 * four QEMUs at once). The parent's clock is set far in the past before the snapshot, so a
 * child whose clock were not set would show it.
 */
let dir: string
let image: string
let parent: MachineInfo
let snap: MachineSnapshot
let children: MachineInfo[]
const secret = randomBytes(12).toString('hex')
/** What each child read first after the fork: 16 bytes of /dev/urandom and its clock, with the host's clock then. */
let firstReads: Array<{ random: string; guestTime: number; hostTime: number }>

const PAST = 1_000_000_000 // 2001-09-09

async function sh(machine: string, command: string): Promise<string> {
  const r = await execOrHang({ dir, machine, command })
  if (r.exitCode !== 0) throw new Error(`${command} in ${machine}: exit ${r.exitCode}: ${r.stderr}`)
  return r.stdout
}

beforeAll(async () => {
  dir = await machineWorkspace('machine-fork')
  image = await sharedMachineImage(dir, 'busybox')
  parent = await bootMachine({ dir, image })
  await sh(parent.id, heartbeatDaemon(secret))
  // Until the daemon's first beat, `cat` fails: that is a not-yet, not an error.
  await pollFor('the daemon to hold the secret in memory only', async () => {
    const r = await execOrHang({ dir, machine: parent.id, command: 'cat /tmp/heartbeat; ls /tmp' })
    return r.exitCode === 0 && r.stdout === `${secret}\nheartbeat\n` ? true : undefined
  })
  await sh(parent.id, `echo carried > /data/from-parent; date -s @${PAST} >/dev/null`)
  snap = await snapshotMachine({ dir, machine: parent.id, message: 'parent, secret held' })
  children = await forkMachine({ dir, image: snap.image, n: 3 })
  firstReads = await Promise.all(
    children.map(async (c) => {
      const [random, time] = (await sh(c.id, "head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'; echo; date +%s")).trim().split('\n')
      return { random: random!, guestTime: Number(time), hostTime: Date.now() / 1000 }
    }),
  )
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

describe('a busybox machine under whatever accelerator the host allows', { timeout: MACHINE_TIMEOUT }, () => {
  it('machineDoctor names the accelerator machines run on, why, and the QEMU version', async () => {
    const doctor = await machineDoctor()
    expect(doctor.accelerator).toBe(parent.accelerator)
    expect(doctor.reason).not.toBe('')
    expect(doctor.qemu).toMatch(/^\d+\.\d+/)
    if (!existsSync('/dev/kvm')) expect(doctor).toMatchObject({ accelerator: 'tcg', reason: 'no /dev/kvm' })
    if (doctor.accelerator === 'tcg') expect(doctor.reason).toMatch(/kvm/i)
  })

  it('builds the same image again from the same packages, naming the kernel it boots', async () => {
    const again = await buildMachineImage({ dir, recipe: 'busybox' })
    expect(again.image).toBe(image)
    expect(again.recipe).toBe('busybox')
    expect(again.kernelRelease).toMatch(/^\d+\.\d+\.\d+-.*cloud-amd64$/)
  })

  it('runs a script in the machine and gives back its exit code, stdout and stderr (a failing script is not an error)', async () => {
    expect(await execOrHang({ dir, machine: parent.id, command: 'echo out; echo err >&2; exit 3' })).toEqual({ exitCode: 3, stdout: 'out\n', stderr: 'err\n' })
    expect(await execOrHang({ dir, machine: parent.id, command: 'printf \'%s|\' "$(cat /proc/1/comm)" "$(uname -m)"' })).toEqual({
      exitCode: 0,
      stdout: 'init|x86_64|',
      stderr: '',
    })
  })

  it('has no network: the machine and every child see only lo', async () => {
    for (const m of [parent, ...children]) {
      expect(await sh(m.id, 'ls /sys/class/net')).toBe('lo\n')
      expect(await sh(m.id, "ip -o link | cut -d: -f2 | tr -d ' '")).toBe('lo\n')
      expect((await execOrHang({ dir, machine: m.id, command: 'ip link show eth0' })).exitCode).not.toBe(0)
    }
  })
})

describe('children of a snapshot', { timeout: MACHINE_TIMEOUT }, () => {
  it('continue from its instant: a value the parent held in memory alone is seen by every child', async () => {
    for (const child of children) {
      expect(await sh(child.id, 'ls /tmp')).not.toContain('secret') // the value is nowhere on a file system
      await sh(child.id, 'rm /tmp/heartbeat') // so what is read next was written after the fork, by the daemon
      const beat = await pollFor(`the daemon in ${child.id} to write again`, async () => {
        const r = await execOrHang({ dir, machine: child.id, command: 'cat /tmp/heartbeat' })
        return r.exitCode === 0 && r.stdout !== '' ? r.stdout : undefined
      })
      expect(beat).toBe(`${secret}\n`)
    }
  })

  it('read different random bytes right after the fork', () => {
    const randoms = firstReads.map((r) => r.random)
    for (const r of randoms) expect(r).toMatch(/^[0-9a-f]{32}$/)
    expect(new Set(randoms).size).toBe(children.length)
  })

  it("have their clock set to the host's, not the snapshot's", async () => {
    expect(Number(await sh(parent.id, 'date +%s'))).toBeLessThan(PAST + 3600) // the parent's clock is still in 2001
    for (const read of firstReads) expect(Math.abs(read.guestTime - read.hostTime)).toBeLessThan(120)
  })

  it("each have a disk of their own: the parent's files are there, a child's write is in no other machine", async () => {
    for (const child of children) expect(await sh(child.id, 'cat /data/from-parent')).toBe('carried\n')
    const [writer, ...others] = children
    await sh(writer!.id, `echo mine > /data/only-${writer!.id}; sync`)
    expect(await sh(writer!.id, `cat /data/only-${writer!.id}`)).toBe('mine\n')
    for (const other of [...others, parent]) expect(await sh(other.id, `ls /data`)).not.toContain('only-')
  })

  it('are listed with the snapshot they came from, and the parent with its latest snapshot', async () => {
    const listed = await listMachines({ dir })
    expect(listed.map((m) => m.id).sort()).toEqual([parent, ...children].map((m) => m.id).sort())
    expect(listed.find((m) => m.id === parent.id)).toMatchObject({ running: true, from: null, head: snap.image, image })
    for (const child of children) expect(listed.find((m) => m.id === child.id)).toMatchObject({ running: true, from: snap.image, head: null, image, memoryMiB: 256 })
    expect(new Set(listed.map((m) => m.pid)).size).toBe(4)
  })

  it('share the pages none of them wrote: a child is counted less (PSS) than it maps (RSS)', async () => {
    const stats = await machineStats({ dir, machine: children[0]!.id })
    expect(stats.pid).toBe(children[0]!.pid)
    expect(stats.rssBytes).toBeGreaterThan(0)
    expect(stats.pssBytes).toBeLessThan(stats.rssBytes)
  })

  it.runIf(process.getuid?.() === 0)('are limited in cgroups of their own (memory: RAM and 256 MiB for QEMU; pids: 256), removed when killed', async () => {
    const [child] = await forkMachine({ dir, image: snap.image, n: 1 })
    expect(child!.limited).toBe(true)
    const groups = forkpointCgroups(child!.pid)
    expect(Object.keys(groups).sort()).toEqual(['memory', 'pids'])
    const memoryMax = ['memory.max', 'memory.limit_in_bytes'].map((f) => join(groups['memory']!, f)).find(existsSync)!
    expect(Number(readFileSync(memoryMax, 'utf8'))).toBe((256 + 256) * 2 ** 20)
    expect(readFileSync(join(groups['pids']!, 'pids.max'), 'utf8').trim()).toBe('256')
    await killMachine({ dir, machine: child!.id })
    for (const group of Object.values(groups)) expect(existsSync(group)).toBe(false)
  })
})

/** The cgroup folders named `forkpoint-…` a process is in, by controller (v1 hierarchies and the v2 one), found through this process's mounts. */
function forkpointCgroups(pid: number): Record<string, string> {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' - '))
    .filter(([, right]) => /^cgroup2? /.test(right ?? ''))
    .map(([left, right]) => ({ point: left!.split(' ')[4]!, v2: right!.startsWith('cgroup2'), options: right!.split(' ')[2] ?? '' }))
  const out: Record<string, string> = {}
  for (const line of readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n')) {
    const [, controllers = '', path = ''] = line.split(':')
    if (!path.includes('/forkpoint-')) continue
    for (const controller of controllers ? controllers.split(',') : ['memory', 'pids']) {
      const mount = mounts.find((m) => (controllers ? !m.v2 && m.options.split(',').includes(controller) : m.v2))
      if (mount) out[controller] = join(mount.point, path)
    }
  }
  return out
}

describe('the version tree of a machine', { timeout: MACHINE_TIMEOUT }, () => {
  let childSnap: MachineSnapshot
  beforeAll(async () => {
    // two QEMUs left for what follows: the parent and the first child
    for (const c of children.slice(1)) await killMachine({ dir, machine: c.id })
    childSnap = await snapshotMachine({ dir, machine: children[0]!.id, message: 'child, own file' })
  })

  it("shows a child's snapshot with the snapshot it was forked from as its parent (log --all)", async () => {
    const entries = await log({ dir, all: true })
    const byId = new Map(entries.map((e) => [e.id, e]))
    expect(byId.get(childSnap.image)).toMatchObject({ parents: [snap.image], message: 'child, own file', refs: [`machines/${children[0]!.id}`] })
    expect(byId.get(snap.image)).toMatchObject({ parents: [], message: 'parent, secret held', refs: [`machines/${parent.id}`] })
    expect(entries.findIndex((e) => e.id === childSnap.image)).toBeLessThan(entries.findIndex((e) => e.id === snap.image))
    expect((await listMachines({ dir })).find((m) => m.id === children[0]!.id)?.head).toBe(childSnap.image)
  })

  it("chains a machine's own snapshots: the next one's parent is its latest", async () => {
    const second = await snapshotMachine({ dir, machine: parent.id })
    const entry = (await log({ dir, all: true })).find((e) => e.id === second.image)
    expect(entry?.parents).toEqual([snap.image])
    expect(entry?.refs).toContain(`machines/${parent.id}`)
  })

  it('restores any node: the first snapshot comes back with the parent’s state, without what a child did after', async () => {
    const restored = await restoreMachine({ dir, image: snap.image })
    try {
      expect(restored).toMatchObject({ from: snap.image, running: true })
      expect(await sh(restored.id, 'ls /data')).not.toContain('only-')
      await sh(restored.id, 'rm /tmp/heartbeat')
      expect(await pollFor('the restored daemon', async () => (await execOrHang({ dir, machine: restored.id, command: 'cat /tmp/heartbeat' })).stdout || undefined)).toBe(
        `${secret}\n`,
      )
    } finally {
      await killMachine({ dir, machine: restored.id })
    }
    const ofChild = await restoreMachine({ dir, image: childSnap.image })
    try {
      expect(await sh(ofChild.id, `cat /data/only-${children[0]!.id}`)).toBe('mine\n')
    } finally {
      await killMachine({ dir, machine: ofChild.id })
    }
  })

  it('diffs two snapshots by pages of RAM and blocks of disk', async () => {
    const diff = await diffMachines({ dir, a: snap.image, b: childSnap.image })
    expect(diff.memory.pages).toBe((256 * 2 ** 20) / 4096)
    expect(diff.memory.changed).toBeGreaterThan(0)
    expect(diff.memory.changed).toBeLessThan(diff.memory.pages)
    expect(diff.disk.blocks).toBe((256 * 2 ** 20) / 4096)
    expect(diff.disk.changed).toBeGreaterThan(0) // the child's file
    expect(diff.devicesChanged).toBe(true)
    expect(await diffMachines({ dir, a: snap.image, b: snap.image })).toEqual({
      memory: { pages: diff.memory.pages, changed: 0 },
      disk: { blocks: diff.disk.blocks, changed: 0 },
      devicesChanged: false,
    })
  })

  it(
    'kills a machine: its QEMU is gone, it is no longer listed, and its id is then unknown (exit 2)',
    async () => {
      const victim = children[0]!
      await killMachine({ dir, machine: victim.id })
      expect(processAlive(victim.pid)).toBe(false)
      expect((await listMachines({ dir })).map((m) => m.id)).not.toContain(victim.id)
      const err = await execOrHang({ dir, machine: victim.id, command: 'true' }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(MachineNotFoundError)
      expect(err).toMatchObject({ exitCode: 2 })
      // its snapshot stays
      expect((await log({ dir, all: true })).map((e) => e.id)).toContain(childSnap.image)
    },
    MACHINE_TIMEOUT,
  )
})
