/** The second thread of `hashSmallFiles`: takes files from the shared counter until none is left. */
import { parentPort, workerData } from 'node:worker_threads'
import { Store } from '../../store/Store.js'
import { type HelperReport, type SharedHashes, hashShare } from './hashFiles.js'

const { storeRoot, paths, write, shared } = workerData as { storeRoot: string; paths: string[]; write: boolean; shared: SharedHashes }

async function work(): Promise<HelperReport> {
  try {
    const store = await Store.open(storeRoot)
    hashShare(store, paths, write, shared)
    return { ok: true, written: store.takeUnsynced() } // made durable with the main thread's, in its one sync
  } catch (err) {
    return { ok: false, message: (err as Error).message, code: (err as { code?: string }).code }
  }
}

parentPort!.postMessage(await work())
