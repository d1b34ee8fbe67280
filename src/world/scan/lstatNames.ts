import { constants, lstatSync } from 'node:fs'
import { EXEC_ROW, FILE_ROW, type IndexColumns, KIND_MASK, type ReadIndex, RACY, STAT_FIELDS } from './indexFile.js'
import { requirePackage } from '../../util/requirePackage.js'
import { PREBUILT_DIR } from '../../util/prebuilt.js'
import { bytesOfName, fsPath } from '../../util/fsName.js'

/**
 * Numbers per name in `lstatNames`' result: mode (file type and permission bits), size,
 * mtime and ctime in milliseconds (as Node's Stats has them), inode.
 */
export const STAT_SLOT = 5
/** The mode of a name that no longer exists. */
export const VANISHED = -1

/** Per directory of the index: whether all its files still hold (see PreviousIndex.filesStillHold). */
export interface FilesCheck {
  holds(dir: number): boolean
  /** No more questions: the work of directories nobody asked about stops. */
  stop(): void
}

/** The scan's lstat: of a directory's entries, and of every file the index lists. */
export interface LstatBackend {
  readonly name: 'native' | 'node'
  /**
   * lstat each of `names` (entries of directory `dir`, never followed): STAT_SLOT numbers
   * per name, mode VANISHED for one that is gone. Any other failure throws Node's error.
   */
  lstatNames(dir: string, names: string[]): Float64Array
  /**
   * Begin checking, for every directory of index `c` (of workspace `root`), whether each
   * of its file rows still has the recorded stat and executable bit, none is racy and
   * none is gone. A directory that cannot be opened does not hold (the scan's own lstat
   * then says why).
   */
  startFilesCheck(root: string, c: ReadIndex): FilesCheck
}

/** Node's lstatSync, name by name. */
export const nodeLstat: LstatBackend = {
  name: 'node',
  lstatNames(dir, names) {
    const out = new Float64Array(names.length * STAT_SLOT)
    names.forEach((name, i) => statInto(out, i, `${dir}/${name}`))
    return out
  },
  startFilesCheck(root, c) {
    return {
      holds(dir) {
        const first = c.dirRows[2 * dir]!
        const fileRows: number[] = []
        for (let row = first; row < first + c.dirRows[2 * dir + 1]!; row++) {
          const kind = c.kinds[row]! & KIND_MASK
          if (kind === FILE_ROW || kind === EXEC_ROW) fileRows.push(row)
        }
        let now: Float64Array
        try {
          now = nodeLstat.lstatNames(
            c.dirPaths[dir] ? `${root}/${c.dirPaths[dir]}` : root,
            fileRows.map((row) => c.names[row]!),
          )
        } catch {
          return false
        }
        return fileRows.every((row, slot) => statStillHolds(c, row, now, slot))
      },
      stop() {},
    }
  },
}

interface NativeAddon {
  lstatNames(dir: Buffer, names: Buffer, out: Float64Array): number
  startFilesCheck(root: Buffer, dirPaths: Buffer, dirRows: Uint32Array, names: Uint8Array, kinds: Uint8Array, stats: Float64Array): FilesCheckJob
  filesCheck(job: FilesCheckJob, dir: number): number
  filesStop(job: FilesCheckJob): void
}

/** The addon's handle on a files check. */
declare const filesCheckJob: unique symbol
type FilesCheckJob = { readonly [filesCheckJob]: true }

/** The built one first: it is of this copy's sources. */
const ADDON_FILES = ['../../../build/Release/forkpoint_native.node', `../../${PREBUILT_DIR}/forkpoint_native.node`]

/**
 * The compiled helper (native/lstat_names.c): the same numbers at a third of the cost per
 * file, and the index's files checked on a second thread from the last directory back
 * while the scan asks from the first. Null when it is neither built (`npm run build`, or at
 * install where no prebuilt fits) nor prebuilt for this platform, or FORKPOINT_NATIVE=0
 * turns it off.
 */
export const nativeLstat: LstatBackend | null = withAddon(loadAddon())

function loadAddon(): NativeAddon | null {
  if (process.env['FORKPOINT_NATIVE'] === '0') return null
  for (const file of ADDON_FILES) {
    try {
      return requirePackage(file) as NativeAddon
    } catch {
      // not there, or not loadable here (a libc older than the prebuilt's): the next, then Node's lstat
    }
  }
  return null
}

function withAddon(addon: NativeAddon | null): LstatBackend | null {
  if (!addon) return null
  return {
    name: 'native',
    lstatNames(dir, names) {
      const out = new Float64Array(names.length * STAT_SLOT)
      if (names.length === 0) return out
      const opened = addon.lstatNames(bytesOfName(dir), bytesOfName(names.join('\0')), out) === 0
      for (let i = 0; i < names.length; i++) {
        // the addon leaves -errno: Node's own lstat then says what went wrong, or finds it there now
        if (!opened || out[i * STAT_SLOT]! < 0) statInto(out, i, `${dir}/${names[i]}`)
      }
      return out
    },
    startFilesCheck(root, c) {
      const job = addon.startFilesCheck(bytesOfName(root), bytesOfName(c.dirPaths.join('\0')), c.dirRows, c.nameBytes, c.kinds, c.stats)
      return { holds: (dir) => addon.filesCheck(job, dir) === 1, stop: () => addon.filesStop(job) }
    },
  }
}

/** The lstat scans use. */
export const lstat: LstatBackend = nativeLstat ?? nodeLstat

function statInto(out: Float64Array, i: number, path: string): void {
  const st = lstatSync(fsPath(path), { throwIfNoEntry: false })
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

/**
 * Whether index row `row` of `c` still holds for the lstat in `slot` of `now` (as
 * `lstatNames` gives it): a regular file with the same executable bit, not racy, of the
 * same size, mtime, ctime and inode. native/lstat_names.c's `row_holds` is the same test.
 */
export function statStillHolds(c: Pick<IndexColumns, 'kinds' | 'stats'>, row: number, now: Float64Array, slot: number): boolean {
  const kind = c.kinds[row]!
  const mode = now[slot * STAT_SLOT]!
  if ((kind & RACY) !== 0 || mode < 0 || (mode & constants.S_IFMT) !== constants.S_IFREG) return false
  if ((kind & KIND_MASK) !== ((mode & 0o111) !== 0 ? EXEC_ROW : FILE_ROW)) return false
  const at = row * STAT_FIELDS
  const from = slot * STAT_SLOT + 1 // after the mode
  for (let i = 0; i < STAT_FIELDS; i++) if (c.stats[at + i] !== now[from + i]) return false
  return true
}
