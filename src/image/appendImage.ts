import type { Digest } from '../objects/digest.js'
import { acquireLock } from '../store/lockFile.js'
import { readRef, updateRef } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import { withWriteLock } from '../store/storeLock.js'
import { inheritElsewhere } from '../world/checkout/cameFromElsewhere.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import { type SnapshotLayer, makeSnapshot } from '../objects/Snapshot.js'
import { type WorldScanner, carriedLayers, withWorldScan } from '../world/scan/snapshotWorkspace.js'
import { EMPTY_TREE } from '../world/tree/treeSource.js'

export interface AppendImageArgs {
  store: Store
  workspace: string
  /** The ref the image goes on: a LangGraph thread's, a Claude Code session's. */
  ref: string
  /** Scan the workspace into the image; false: the files of the image it goes on top of. */
  scan: boolean
  message: string
  agent: string
  /**
   * The layers the new image sets (the others carry over), decided under the ref's lock from
   * what the ref held (null: nothing yet), so that two writers never build on the same image.
   */
  layers: (current: Digest | null) => Promise<Partial<Record<SnapshotLayer, Digest>>>
  /** Write nothing when the files and the layers are those of the ref's image already (returns its id). */
  skipUnchanged?: boolean
  /** How the workspace is scanned when `scan` (default: in full; the service passes its watcher's). */
  scanner?: WorldScanner | undefined
}

/**
 * Write an image on top of the one `ref` names (on top of HEAD when the ref is new, so
 * the line starts from the workspace's history) and move the ref to it: HEAD stays where
 * it is. One writer per ref at a time, in any process (a lock file under the store's `locks/`); every
 * object is durable before the ref moves. The way adapters keep a line of images of their own.
 */
export async function appendImage(args: AppendImageArgs): Promise<Digest> {
  const { store, workspace, scan } = args
  if (scan) return withWorldScan({ store, workspace, scanner: args.scanner }, (world) => writeOnRef(args, world.tree, () => world.persist()))
  return withWriteLock(store, () => writeOnRef(args, null, () => store.sync()))
}

async function writeOnRef({ store, ref, message, agent, layers, skipUnchanged = false }: AppendImageArgs, tree: Digest | null, persist: () => Promise<void>): Promise<Digest> {
  // under locks/, not beside the ref: `<ref>.append.lock` would be the ref lock of the ref named `<ref>.append`
  const lock = await acquireLock(`${store.path('locks', ref)}.lock`, { what: `images of ${ref}` })
  try {
    const current = await readRef(store, ref)
    const parentId = current ?? (await readRef(store, 'HEAD'))
    const parent = parentId ? await readSnapshot(store, parentId) : null
    const set = await layers(current)
    if (skipUnchanged && current && parent && (tree ?? parent.world.tree) === parent.world.tree && Object.entries(set).every(([layer, id]) => parent[layer] === id)) {
      await persist()
      return current
    }
    const env = parent?.world.env
    const image = makeSnapshot({
      parents: parentId ? [parentId] : [],
      tree: tree ?? parent?.world.tree ?? (await store.writeObject({ ...EMPTY_TREE })),
      message,
      agent,
      layers: { ...carriedLayers(parent), ...set },
      ...(env ? { env } : {}),
    })
    const id = await store.writeObject(image)
    if (tree === null && parentId) await inheritElsewhere(store, parentId, id) // the parent's world as it is
    await persist()
    await updateRef({ store, name: ref, id, expected: current, message })
    return id
  } finally {
    await lock.release()
  }
}
