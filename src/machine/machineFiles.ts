import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Digest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import { writeFilePieces } from './filePieces.js'
import { readMachineImage } from './image/MachineImage.js'
import type { MachineLayer } from '../objects/MachineLayer.js'
import { machinesDir } from './machineRecords.js'

/** A machine image's kernel and initramfs as files QEMU can read, and its root filesystem, the raw file a machine's disk is an overlay of. */
export interface ImageFiles {
  kernel: string
  initrd: string
  cmdline: string
  rootfs: { path: string; bytes: number } | null
}

/** A machine layer's files: the RAM template children map copy-on-write, the device state, the raw disk children's overlays sit on. */
export interface SnapshotFiles {
  ram: string
  devices: string
  disk: string
}

/** The image's files, written out of the store (every byte checked) the first time a machine needs them. */
export async function imageFiles(store: Store, digest: Digest): Promise<ImageFiles> {
  const image = await readMachineImage(store, digest)
  const dir = await materialized(store, '.images', digest, async (tmp) => {
    writeFileSync(join(tmp, 'kernel'), await store.readBlob(image.kernel))
    writeFileSync(join(tmp, 'initrd'), await store.readBlob(image.initrd))
    if (image.rootfs) await writeFilePieces(store, image.rootfs.disk, join(tmp, 'rootfs'), image.rootfs.diskBytes)
  })
  const rootfs = image.rootfs ? { path: join(dir, 'rootfs'), bytes: image.rootfs.diskBytes } : null
  return { kernel: join(dir, 'kernel'), initrd: join(dir, 'initrd'), cmdline: image.cmdline, rootfs }
}

/**
 * A snapshot's files, written out of the store the first time a fork needs them, every
 * piece checked against its digest before QEMU reads a byte (a changed one:
 * DigestMismatchError, exit 5). Sparse: untouched RAM and disk stay holes.
 */
export async function snapshotFiles(store: Store, digest: Digest, layer: MachineLayer): Promise<SnapshotFiles> {
  const dir = await materialized(store, '.snapshots', digest, async (tmp) => {
    await writeFilePieces(store, layer.memory, join(tmp, 'ram'), layer.memoryMiB * 1024 * 1024)
    await writeFilePieces(store, layer.disk, join(tmp, 'disk'), layer.diskBytes)
    writeFileSync(join(tmp, 'devices'), await store.readBlob(layer.devices))
  })
  return filesIn(dir)
}

export const filesIn = (dir: string): SnapshotFiles => ({ ram: join(dir, 'ram'), devices: join(dir, 'devices'), disk: join(dir, 'disk') })

/** Files a snapshot just wrote (from the machine itself, not the store) kept as the snapshot's, so a fork right after writes nothing. */
export function keepSnapshotFiles(store: Store, digest: Digest, tmp: string): void {
  const dir = cacheDir(store, '.snapshots', digest)
  renameIfAbsent(tmp, dir)
  rmSync(tmp, { recursive: true, force: true })
}

/** Another process may have put the same files in place first: theirs are as good. */
function renameIfAbsent(tmp: string, dir: string): void {
  try {
    renameSync(tmp, dir)
  } catch (err) {
    if (!existsSync(dir)) throw err
  }
}

/** A folder for files on their way into `.snapshots`. */
export function stagingDir(store: Store): string {
  mkdirSync(join(machinesDir(store), '.snapshots'), { recursive: true })
  return mkdtempSync(join(machinesDir(store), '.snapshots', '.new-'))
}

const cacheDir = (store: Store, kind: string, digest: Digest) => join(machinesDir(store), kind, digest.slice('sha256:'.length))

/** The cache folder of an object: written whole in a temp folder and renamed in, so a reader never sees half of it. */
async function materialized(store: Store, kind: string, digest: Digest, write: (tmp: string) => Promise<void>): Promise<string> {
  const dir = cacheDir(store, kind, digest)
  if (existsSync(dir)) return dir
  mkdirSync(join(machinesDir(store), kind), { recursive: true })
  const tmp = mkdtempSync(join(machinesDir(store), kind, '.new-'))
  try {
    await write(tmp)
    renameIfAbsent(tmp, dir)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return dir
}
