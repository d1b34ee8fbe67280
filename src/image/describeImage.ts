import { openStore, type StoreLocator } from '../store/findStore.js'
import type { Digest } from '../objects/digest.js'
import { resolveId } from '../store/resolveId.js'
import { showObject, type ShownObject } from '../store/showObject.js'
import { readRunObject } from '../trace/core/loadRun.js'
import type { JsonValue, Run } from '../objects/Run.js'
import { transcriptMessages } from '../trace/core/transcript.js'
import type { Snapshot } from '../objects/Snapshot.js'
import { countFiles } from '../world/scan/countFiles.js'
import { treeSource } from '../world/tree/treeSource.js'
import { otherLayers } from './imageLayers.js'
import { readImage, storedKind } from './readImage.js'

export interface ImageDescription {
  id: Digest
  kind: 'snapshot'
  parents: Digest[]
  meta: Snapshot['meta']
  world: { tree: Digest; files: number; bytes: number; env: Record<string, string> | null }
  /** The trace as messages when it came from a chat transcript, else as steps. */
  trace: { id: Digest; runId: string; entrypoint: string; status: string; steps: Array<{ idx: number; name: string; type: string }>; messages: JsonValue[] | null } | null
  layers: Array<{ layer: string; id: Digest; kind: string | null }>
  object: Snapshot
}

/** What `forkpoint show` prints: an image layer by layer (each layer checked for its kind), any other object as it is. */
export async function describeObject({ id, ...locator }: StoreLocator & { id: string }): Promise<ImageDescription | ShownObject> {
  const { store } = await openStore(locator)
  const shown = await showObject({ store, id })
  return shown.kind === 'snapshot' ? describeImage({ store, spec: shown.id }) : shown
}

export async function describeImage({ spec, ...locator }: StoreLocator & { spec: string }): Promise<ImageDescription> {
  const { store } = await openStore(locator)
  const id = await resolveId(store, spec)
  const snapshot = await readImage(store, id)
  const { files, bytes } = await countFiles(treeSource(store), snapshot.world.tree)
  const layers = await Promise.all(otherLayers(snapshot).map(async (l) => ({ ...l, kind: await storedKind(store, l.id) })))
  return {
    id,
    kind: 'snapshot',
    parents: snapshot.parents,
    meta: snapshot.meta,
    world: { tree: snapshot.world.tree, files, bytes, env: snapshot.world.env ?? null },
    trace: snapshot.trace ? describeTrace(snapshot.trace, await readRunObject(store, snapshot.trace)) : null,
    layers,
    object: snapshot,
  }
}

function describeTrace(id: Digest, run: Run): NonNullable<ImageDescription['trace']> {
  return {
    id,
    runId: run.runId,
    entrypoint: run.entrypoint,
    status: run.status,
    steps: run.steps.map(({ idx, name, type }) => ({ idx, name, type })),
    messages: transcriptMessages(run),
  }
}
