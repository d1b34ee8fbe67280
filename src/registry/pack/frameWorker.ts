/** The second thread of `openFrameQueue`: builds each frame it is sent from the objects' files or the store's packs, or answers null for one it cannot. */
import { parentPort, workerData } from 'node:worker_threads'
import { LocalPacks } from '../../store/LocalPacks.js'
import { objectPathIn } from '../../store/objectPath.js'
import { readObjectBytesSync } from '../../store/readObjectBytes.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { frameCompressor } from '../../store/frameCompressor.js'
import { type FrameReader, buildFrame } from './frameBuilder.js'

const { level, objectsDir, packsDir } = workerData as { level: number; objectsDir: string; packsDir: string }
const compressor = frameCompressor(level)
// a store whose objects a cold snapshot or a clone packed has no file for most of them
const packs = new LocalPacks(packsDir)
const files: FrameReader = {
  read: (o) => packs.bytesOf(o.digest, objectPathIn(objectsDir, o.digest), (path) => readObjectBytesSync(path, o.size)),
  where: (o) => objectPathIn(objectsDir, o.digest),
}
parentPort!.on('message', ({ id, objects }: { id: number; objects: BlobRef[] }) => {
  try {
    const frame = buildFrame(objects, { ...files, compressor })
    parentPort!.postMessage({ id, frame: frame.bytes, rawSize: frame.rawSize })
  } catch {
    parentPort!.postMessage({ id, frame: null }) // built again on the main thread, which says what is wrong
  }
})
