import { UsageError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import type { Store } from '../store/Store.js'
import { readChunks, readSnapshot } from '../world/tree/readObjects.js'
import { piecesOf, readRange } from '../image/storedPieces.js'
import { MACHINE_PIECE } from './filePieces.js'
import { readMachineLayer } from './MachineLayer.js'

/** 4 KiB: the guest's page, and the block a disk is compared by. */
const PAGE = 4096

/** How two machine snapshots differ, counted in 4 KiB pages of RAM and blocks of disk. */
export interface MachineDiff {
  memory: { pages: number; changed: number }
  disk: { blocks: number; changed: number }
  devicesChanged: boolean
}

/**
 * Compare two snapshot images' machines. Pieces with the same digest are the same and
 * never read; a piece that differs is read from both and compared page by page.
 */
export async function diffSnapshotMachines({ a, b, ...locator }: StoreLocator & { a: Digest; b: Digest }): Promise<MachineDiff> {
  const { store } = await openStore(locator)
  const [left, right] = await Promise.all([a, b].map(async (image) => machineOf(store, image)))
  return {
    memory: await changedPages(store, left!.memory, right!.memory),
    disk: await changedPages(store, left!.disk, right!.disk).then(({ pages, changed }) => ({ blocks: pages, changed })),
    devicesChanged: left!.devices !== right!.devices,
  }
}

async function machineOf(store: Store, image: Digest) {
  const snap = await readSnapshot(store, image)
  if (!snap.machine) throw new UsageError(`image ${image} has no machine layer`, { value: image })
  return readMachineLayer(store, snap.machine)
}

async function changedPages(store: Store, a: Digest, b: Digest): Promise<{ pages: number; changed: number }> {
  const [left, right] = await Promise.all([readChunks(store, a), readChunks(store, b)])
  const [lp, rp] = [piecesOf(left.chunks), piecesOf(right.chunks)]
  const size = Math.max(left.size, right.size)
  let changed = 0
  for (let at = 0; at < size; at += MACHINE_PIECE) {
    const [l, r] = [lp[at / MACHINE_PIECE], rp[at / MACHINE_PIECE]]
    if (l && r && l.blob === r.blob) continue
    const [lb, rb] = [l ? readRange(store, [l], l.at, l.at + l.size) : Buffer.alloc(0), r ? readRange(store, [r], r.at, r.at + r.size) : Buffer.alloc(0)]
    for (let page = 0; page < Math.max(lb.length, rb.length); page += PAGE) if (!lb.subarray(page, page + PAGE).equals(rb.subarray(page, page + PAGE))) changed++
  }
  return { pages: Math.ceil(size / PAGE), changed }
}
