import { lstatSync } from 'node:fs'
import { EXEC_ROW, FILE_ROW, KIND_MASK, type ReadIndex, RACY, STAT_FIELDS } from './indexFile.js'
import { requirePackage } from '../util/requirePackage.js'

/**
 * Numbers per name in `lstatNames`' result: mode (file type and permission bits), size,
 * mtime and ctime in milliseconds (as Node's Stats has them), inode.
 */
export const STAT_SLOT = 5
/** The mode of a name that no longer exists. */
export const VANISHED = -1

interface NativeAddon {
  lstatNames(dir: string, names: string, out: Float64Array): number
  startFilesCheck(root: string, dirPaths: string, dirRows: Uint32Array, names: Uint8Array, kinds: Uint8Array, stats: Float64Array): FilesCheckJob
  filesCheck(job: FilesCheckJob, dir: number): number
}

/** The addon's handle on a files check. */
declare const filesCheckJob: unique symbol
type FilesCheckJob = { readonly [filesCheckJob]: true }

/**
 * The compiled helper (native/lstat_names.c, built by `npm run build` or at install), or
 * null when it was not built (no compiler) or FORKPOINT_NATIVE=0 turns it off: then
 * Node's lstatSync does the same, three times slower. Both give the same numbers.
 */
const native: NativeAddon | null = loadNative()

function loadNative(): NativeAddon | null {
  if (process.env['FORKPOINT_NATIVE'] === '0') return null
  try {
    return requirePackage('../../build/Release/forkpoint_native.node') as NativeAddon
  } catch {
    return null
  }
}

/** Which lstat the scan uses. */
export function lstatBackend(): 'native' | 'node' {
  return native ? 'native' : 'node'
}

/**
 * lstat each of `names` (entries of directory `dir`, never followed): STAT_SLOT numbers
 * per name, mode VANISHED for one that is gone. Any other failure throws Node's error.
 */
export function lstatNames(dir: string, names: string[]): Float64Array {
  const out = new Float64Array(names.length * STAT_SLOT)
  if (names.length === 0) return out
  const done = native !== null && native.lstatNames(dir, names.join('\0'), out) === 0
  for (let i = 0; i < names.length; i++) {
    // the addon leaves -errno: Node's own lstat then says what went wrong, or finds it there now
    if (!done || out[i * STAT_SLOT]! < 0) statInto(out, i, `${dir}/${names[i]}`)
  }
  return out
}

function statInto(out: Float64Array, i: number, path: string): void {
  const st = lstatSync(path, { throwIfNoEntry: false })
  const at = i * STAT_SLOT
  if (st === undefined) {
    out.fill(0, at, at + STAT_SLOT)
    out[at] = VANISHED
    return
  }
  out[at] = st.mode
  out[at + 1] = st.size
  out[at + 2] = st.mtimeMs
  out[at + 3] = st.ctimeMs
  out[at + 4] = st.ino
}

/** Per directory of the index: whether all its files still hold (see PreviousIndex.filesStillHold). */
export interface FilesCheck {
  holds(dir: number): boolean
}

/**
 * Begin checking, for every directory of index `c` (of workspace `root`), whether each
 * of its file rows still has the recorded stat and executable bit, none is racy and
 * none is gone. The addon does it on a second thread from the last directory back while
 * the scan asks from the first; without it, each directory is checked when asked. A
 * directory that cannot be opened does not hold (the scan's own lstat says why).
 */
export function startFilesCheck(root: string, c: ReadIndex): FilesCheck {
  if (native) {
    const job = native.startFilesCheck(root, c.dirPaths.join('\0'), c.dirRows, c.nameBytes, c.kinds, c.stats)
    return { holds: (dir) => native.filesCheck(job, dir) === 1 }
  }
  return {
    holds(dir) {
      const abs = c.dirPaths[dir] ? `${root}/${c.dirPaths[dir]}` : root
      const first = c.dirRows[2 * dir]!
      for (let row = first; row < first + c.dirRows[2 * dir + 1]!; row++) {
        const kind = c.kinds[row]! & KIND_MASK
        if ((kind === FILE_ROW || kind === EXEC_ROW) && !fileRowHolds(`${abs}/${c.names[row]}`, c.kinds[row]!, c.stats, row * STAT_FIELDS)) return false
      }
      return true
    },
  }
}

function fileRowHolds(path: string, kind: number, stats: Float64Array, at: number): boolean {
  let st
  try {
    st = lstatSync(path, { throwIfNoEntry: false })
  } catch {
    return false
  }
  if (st === undefined || (kind & RACY) !== 0 || !st.isFile()) return false
  const exec = (st.mode & 0o111) !== 0
  return (kind & KIND_MASK) === (exec ? EXEC_ROW : FILE_ROW) && stats[at] === st.size && stats[at + 1] === st.mtimeMs && stats[at + 2] === st.ctimeMs && stats[at + 3] === st.ino
}
