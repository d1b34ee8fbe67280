/** What push and pull report while they work (for progress bars). */
export interface TransferProgress {
  phase: 'checking' | 'packing' | 'sending' | 'receiving' | 'verifying'
  objects: number
  totalObjects: number
  bytes: number
  totalBytes: number
}

export type ProgressListener = (progress: TransferProgress) => void

/** A progress counter: reports every finished object (or run of them), and byte counts at most every 100 ms. */
export function progressCounter(phase: TransferProgress['phase'], totalObjects: number, totalBytes: number, listener?: ProgressListener) {
  const state: TransferProgress = { phase, objects: 0, totalObjects, bytes: 0, totalBytes }
  let last = 0
  const tell = (force = false) => {
    const now = Date.now()
    if (listener && (force || now - last >= 100)) {
      last = now
      listener({ ...state })
    }
  }
  return {
    state,
    addBytes(n: number) {
      state.bytes += n
      tell()
    },
    objectsDone(n = 1) {
      state.objects += n
      tell(true)
    },
    finish() {
      tell(true)
    },
  }
}
