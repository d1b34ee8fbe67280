import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { UsageError } from '../errors/index.js'
import { initWorkspace } from '../store/initStore.js'
import type { Digest } from '../objects/digest.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { updateRef } from '../store/refs.js'
import { resolveId } from '../store/resolveId.js'
import { type MachineDiff, diffSnapshotMachines } from './diffMachines.js'
import { buildBusyboxImage } from './image/buildBusyboxImage.js'
import { buildRootfsImage } from './image/buildRootfsImage.js'
import { BROWSER_FILES } from './browser/browserGuest.js'
import type { BootOptions, ForkOptions, MachineInfo, MachineRef, MachineSnapshot, MachineStats } from './MachineBackend.js'
export { acceleratorRequest } from './qemu/accelerator.js'
export { copyToMachine } from './copy/copyToMachine.js'
export { copyFromMachine } from './copy/copyFromMachine.js'
export { machineConsole } from './qemu/machineConsole.js'
export { evalInMachine } from './browser/evalInMachine.js'
export { parseSize } from '../sandbox/limits.js'
import { type AcceleratorChoice, type AcceleratorRequest, forgetVerdict, planAccelerator, qemuVersion } from './qemu/accelerator.js'
import { readMachineImage } from './image/MachineImage.js'
import type { ExecResult } from './qemu/GuestChannel.js'
import { qemuBackend } from './qemu/qemuBackend.js'
import { reapOrphans } from './reapOrphans.js'
import { commitOutbox } from '../effects/outbox.js'
import type { SentEffects } from '../effects/sendUnsent.js'
import { machineOutbox } from './net/machineNet.js'

/**
 * The recipes `buildMachineImage` knows, the Debian packages each adds to a root filesystem
 * and the files it adds to them: busybox has none (its guest lives in its initramfs);
 * python, node and browser are Debian root filesystems run through qemu-guest-agent, the
 * browser one with a headless Chromium its init starts and a CDP client for the host.
 */
const RECIPES = {
  busybox: null,
  python: { packages: ['python3'], files: [] },
  node: { packages: ['nodejs'], files: [] },
  browser: { packages: ['chromium', 'python3'], files: BROWSER_FILES },
} as const
export type MachineRecipe = keyof typeof RECIPES
export const MACHINE_RECIPES = Object.keys(RECIPES) as MachineRecipe[]

/** Debian's rule for a package name; anything else (an option to apt, a path) is refused before apt sees it. */
const PACKAGE_NAME = /^[a-z0-9][a-z0-9+.-]+$/

/**
 * Build a machine image from a recipe (Debian packages only) into the store, on
 * `refs/machine-images/<recipe>` so gc keeps it. `packages` adds Debian packages to a root
 * filesystem recipe's.
 */
export async function buildMachineImage({
  recipe,
  packages = [],
  ...locator
}: StoreLocator & { recipe: string; packages?: string[] }): Promise<{ image: Digest; recipe: MachineRecipe; kernelRelease: string }> {
  if (!Object.hasOwn(RECIPES, recipe)) throw new UsageError(`no machine recipe ${JSON.stringify(recipe)}: the recipes are ${MACHINE_RECIPES.join(', ')}`, { value: recipe })
  const base = RECIPES[recipe as MachineRecipe]
  const odd = packages.find((p) => !PACKAGE_NAME.test(p))
  if (odd !== undefined) throw new UsageError(`${JSON.stringify(odd)} is not a Debian package name`, { value: odd })
  if (base === null && packages.length > 0)
    throw new UsageError(`the busybox recipe takes no packages: its guest is busybox alone (python, node and browser take packages)`, { value: recipe })
  const { store } = await openStore(locator)
  const { image, kernelRelease } = base === null ? await buildBusyboxImage(store) : await buildRootfsImage(store, recipe, [...base.packages, ...packages], base.files)
  await updateRef({ store, name: `refs/machine-images/${recipe}`, id: image, message: `machine build ${recipe}` }) // kept through gc
  return { image, recipe: recipe as MachineRecipe, kernelRelease }
}

/** Boot a machine image cold. `image` is an id, a prefix of one, or a ref. */
export async function bootMachine(o: Omit<BootOptions, 'image'> & { image: string }): Promise<MachineInfo> {
  return qemuBackend.boot({ ...o, image: await resolve(o, o.image) })
}

/** Run a shell script in a running machine; its exit code and output (a failing script is not an error). */
export function execMachine(o: MachineRef & { command: string }): Promise<ExecResult> {
  return qemuBackend.exec(o)
}

/** Snapshot a running machine into an image whose `machine` layer holds it; the machine goes on. */
export function snapshotMachine(o: MachineRef & { message?: string }): Promise<MachineSnapshot> {
  return qemuBackend.snapshot(o)
}

/** A machine committed: its snapshot, and what its outbox sent. */
export type MachineCommit = MachineSnapshot & { effects: SentEffects }

/**
 * Choose a machine: snapshot it (its image on `refs/heads/machines/<id>`, the machine goes
 * on) and hand its outbox to the workspace, sending the requests its guest made that the
 * workspace's HTTP effects policy deferred, once per key (a sibling's commit may have sent
 * one already). A machine killed uncommitted has its deferred requests dropped, never sent.
 * `env`: where FORKPOINT_KEY is read from for the ledgers (default: the process's environment).
 */
export async function commitMachine({ env = process.env, ...o }: MachineRef & { message?: string; env?: NodeJS.ProcessEnv }): Promise<MachineCommit> {
  const snapshot = await qemuBackend.snapshot(o)
  const { store } = await openStore(o)
  return { ...snapshot, effects: await commitOutbox({ store, branchId: machineOutbox(o.machine).id, env }) }
}

/** Start `n` children from a snapshot image, each continuing from its instant. */
export async function forkMachine(o: Omit<ForkOptions, 'image'> & { image: string }): Promise<MachineInfo[]> {
  return qemuBackend.fork({ ...o, image: await resolve(o, o.image) })
}

/** Start one machine from a snapshot image: any node of a machine's version tree. */
export async function restoreMachine(o: Omit<ForkOptions, 'image' | 'n'> & { image: string }): Promise<MachineInfo> {
  return qemuBackend.restore({ ...o, image: await resolve(o, o.image) })
}

export function killMachine(o: MachineRef): Promise<void> {
  return qemuBackend.kill(o)
}

/** What `machine gc` reaped: machines that will not run again, and QEMUs no record names. */
export interface MachineGc {
  /** Machines incomplete (what started them was killed), gone, failed or past their time to live, removed with their files. */
  removed: string[]
  /** QEMU processes of this store's machines that no record names, killed. */
  orphans: number[]
}

/**
 * Reap what killed processes left: every machine that is incomplete, gone or failed
 * (its QEMU, if one runs, killed; its cgroups, ref and files removed), every QEMU running
 * a machine of this store that no record names, and machine folders with no record.
 * Running, paused and starting machines are left alone, but for those past their time to live.
 */
export async function machineGc(o: StoreLocator = {}): Promise<MachineGc> {
  const { store } = await openStore(o)
  const expired = await reapExpired(o)
  const reapable = (await qemuBackend.list(o)).filter((m) => m.state === 'incomplete' || m.state === 'gone' || m.state === 'failed')
  for (const m of reapable) await qemuBackend.kill({ ...o, machine: m.id })
  return { removed: [...expired, ...reapable.map((m) => m.id)], orphans: await reapOrphans(store) }
}

/**
 * Remove the machines past their time to live: their launcher has killed their QEMU (one
 * it has not yet is killed here), and their files go. One still starting is its starter's
 * to finish or fail; one failed keeps its logs until `machine rm`.
 */
async function reapExpired(o: StoreLocator): Promise<string[]> {
  const now = Date.now()
  const expired = (await qemuBackend.list(o)).filter((m) => m.expiresAt !== null && Date.parse(m.expiresAt) <= now && m.state !== 'starting' && m.state !== 'failed')
  for (const m of expired) await qemuBackend.kill({ ...o, machine: m.id })
  return expired.map((m) => m.id)
}

/** Remove a machine that is not running: one gone, or one whose start or fork failed (its logs go with it). A running one is refused: killMachine stops it. */
export async function removeMachine(o: MachineRef): Promise<void> {
  const machine = (await listMachines(o)).find((m) => m.id === o.machine)
  if (machine?.running) throw new UsageError(`machine ${o.machine} is running: forkpoint machine kill ${o.machine} stops and removes it`, { value: o.machine })
  return qemuBackend.kill(o)
}

/** The store's machines, once those past their time to live are removed. */
export async function listMachines(o: StoreLocator = {}): Promise<MachineInfo[]> {
  await reapExpired(o)
  return qemuBackend.list(o)
}

export function machineStats(o: MachineRef): Promise<MachineStats> {
  return qemuBackend.stats(o)
}

/** How two snapshot images' machines differ: RAM pages, disk blocks, device state. */
export async function diffMachines(o: StoreLocator & { a: string; b: string }): Promise<MachineDiff> {
  return diffSnapshotMachines({ ...o, a: await resolve(o, o.a), b: await resolve(o, o.b) })
}

/**
 * What machines run with here, found as a user's first boot finds it: the busybox recipe
 * is built in a scratch store and booted (on KVM first, unless `accel` says otherwise or
 * /dev/kvm is not usable), with any earlier verdict on its kernel forgotten. The
 * accelerator it ran on and why, and QEMU's version.
 */
export async function machineDoctor(o: { accel?: AcceleratorRequest } = {}): Promise<AcceleratorChoice & { qemu: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'forkpoint-doctor-'))
  try {
    const locator = { dir, store: join(dir, '.forkpoint') }
    await initWorkspace(locator)
    const { image } = await buildMachineImage({ ...locator, recipe: 'busybox' })
    const { kernel } = await readMachineImage((await openStore(locator)).store, image)
    await forgetVerdict(kernel)
    const machine = await qemuBackend.boot({ ...locator, image, accel: o.accel ?? 'auto' })
    await qemuBackend.kill({ ...locator, machine: machine.id })
    const plan = await planAccelerator(o.accel ?? 'auto', kernel)
    const reason = plan.accelerator === machine.accelerator ? plan.reason : `a boot of the busybox recipe ran on ${machine.accelerator}`
    return { accelerator: machine.accelerator, reason, qemu: await qemuVersion() }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function resolve(locator: StoreLocator, spec: string): Promise<Digest> {
  return resolveId((await openStore(locator)).store, spec)
}
