import { promises as fs } from 'node:fs'
import { join, resolve } from 'node:path'
import { TargetNotEmptyError, UnsafePathError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { resolveId } from '../store/resolveId.js'
import { runArtifactText } from '../trace/core/runArtifact.js'
import { transcriptText } from '../trace/core/transcript.js'
import { atomicWrite } from '../util/atomicWrite.js'
import { checkout, hiddenSibling } from '../world/checkout/checkout.js'
import { materializeTree } from '../world/checkout/materializeTree.js'
import { treeSource } from '../world/tree/treeSource.js'
import { readModelLayer } from './model/modelLayer.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { readRunObject } from '../trace/core/loadRun.js'
import { otherLayers } from './imageLayers.js'
import { readImage, storedKind } from './readImage.js'

export interface CheckoutAgentArgs extends StoreLocator {
  /** The image: a snapshot id, short id, head, tag or `HEAD~N`. */
  id: string
  /** A new (or empty) directory to write every layer into. */
  into: string
}

export interface CheckoutAgentResult {
  id: Digest
  target: string
  /** Files written, relative to `target`, one per layer (the world as one directory). */
  written: string[]
}

/**
 * Every layer of an image, back in the form it came in, so an agent resumes from it:
 * `world/` the files, `model/` the model layer's files, `env.json` the environment, `trace.jsonl` the chat transcript exactly
 * as given (or `trace.run.json`, the run artifact), `layers/<layer>.json` each other
 * layer's object as its stored bytes, and `image.json` the snapshot object itself. Written
 * beside the target and renamed into place: a refused image (a layer of the wrong kind,
 * exit 5) or a failure leaves nothing behind.
 */
export async function checkoutAgent(args: CheckoutAgentArgs): Promise<CheckoutAgentResult> {
  const { store } = await openStore(args)
  const id = await resolveId(store, args.id)
  const snapshot = await readImage(store, id)
  const target = resolve(args.into)
  await assertEmpty(target)
  const temp = hiddenSibling(target)
  await fs.mkdir(temp)
  try {
    await checkout({ store, id, into: join(temp, 'world') })
    const written = ['world/']
    const write = async (name: string, bytes: string | Buffer): Promise<void> => {
      await atomicWrite(join(temp, name), bytes)
      written.push(name)
    }
    if (snapshot.model) {
      const { tree } = await readModelLayer(store, snapshot.model)
      await materializeTree({ store, source: treeSource(store), tree, into: join(temp, 'model'), method: 'copy' })
      written.push('model/')
    }
    if (snapshot.world.env) await write('env.json', `${JSON.stringify(snapshot.world.env, null, 2)}\n`)
    if (snapshot.trace) {
      const run = await readRunObject(store, snapshot.trace)
      const jsonl = transcriptText(run)
      await (jsonl === null ? write('trace.run.json', runArtifactText(run)) : write('trace.jsonl', jsonl))
    }
    const layers = otherLayers(snapshot)
    if (layers.length > 0) await fs.mkdir(join(temp, 'layers'))
    for (const { layer, id: digest } of layers) {
      if (!/^[A-Za-z0-9_-]+$/.test(layer)) throw new UnsafePathError(`snapshot ${id}: layer name ${JSON.stringify(layer)} cannot be a file name; refusing the image`, { layer })
      const kind = await storedKind(store, digest)
      await write(`layers/${layer}.${kind === 'blob' ? 'bin' : 'json'}`, await store.readBlob(digest))
    }
    await write('image.json', await store.readBlob(id))
    await fs.rm(target, { recursive: true, force: true }) // an empty directory, checked above
    await fs.rename(temp, target)
    return { id, target, written }
  } catch (err) {
    await fs.rm(temp, { recursive: true, force: true })
    throw err
  }
}

async function assertEmpty(target: string): Promise<void> {
  const existing = await fs.readdir(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null
    if (err.code === 'ENOTDIR') return ['(a file)']
    throw err
  })
  if (existing && existing.length > 0) throw new TargetNotEmptyError(`checkout target ${target} exists and is not empty`, { target })
}
