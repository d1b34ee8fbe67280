/** The second thread of `openFrameQueue`: compresses each frame it is sent and sends it back. */
import { parentPort, workerData } from 'node:worker_threads'
import { frameCompressor } from './frameCompressor.js'

const compressor = frameCompressor((workerData as { level: number }).level)
parentPort!.on('message', ({ id, raw }: { id: number; raw: Uint8Array }) => {
  parentPort!.postMessage({ id, frame: compressor.compress(raw) })
})
