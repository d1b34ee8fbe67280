/** The second thread of `openFrameQueue`: builds each frame it is sent from the objects' files, or answers null for one it cannot. */
import { parentPort, workerData } from 'node:worker_threads'
import { objectPathIn } from '../../store/objectPath.js'
import { readSizedOrNullSync } from '../../util/fsx.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { frameCompressor } from '../../store/frameCompressor.js'
import { type FrameReader, buildFrame } from './frameBuilder.js'

const { level, objectsDir } = workerData as { level: number; objectsDir: string }
const compressor = frameCompressor(level)
const files: FrameReader = {
  read: (o) => readSizedOrNullSync(objectPathIn(objectsDir, o.digest), o.size),
  where: (o) => objectPathIn(objectsDir, o.digest),
}
parentPort!.on('message', ({ id, objects }: { id: number; objects: BlobRef[] }) => {
  try {
    const frame = buildFrame(objects, { ...files, compressor })
    parentPort!.postMessage({ id, frame: frame.bytes, rawSize: frame.rawSize })
  } catch {
    parentPort!.postMessage({ id, frame: null }) // built again on the main thread, which reads the store's packs too and says what is wrong
  }
})
