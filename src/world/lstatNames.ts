import { lstatSync } from 'node:fs'
import { EXEC_ROW, FILE_ROW, KIND_MASK, RACY, STAT_FIELDS } from './indexFile.js'
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
  filesUnchanged(dir: string, names: string, kinds: Uint8Array, stats: Float64Array): number
}

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

/**
 * Whether every file row of a directory the index lists (`names`, their `kinds` and
 * `stats` as the index has them) still has that stat and executable bit, none is racy
 * and none is gone: then the directory's rows hold as they are. False at the first
 * difference, or when the directory cannot be opened (the caller's own lstat says why).
 */
export function filesUnchanged(dir: string, names: string[], kinds: Uint8Array, stats: Float64Array): boolean {
  if (native) return native.filesUnchanged(dir, names.join('\0'), kinds, stats) === 1
  return names.every((name, row) => {
    const kind = kinds[row]! & KIND_MASK
    return (kind !== FILE_ROW && kind !== EXEC_ROW) || fileRowHolds(`${dir}/${name}`, kinds[row]!, stats, row * STAT_FIELDS)
  })
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
