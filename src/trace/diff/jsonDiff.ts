import { assertDepth } from '../../util/jsonDepth.js'
import type { JsonValue } from '../../objects/Run.js'
import { childPath } from '../redact/Redactor.js'

/** One difference between two JSON values, at a path like `$.messages[1].content`. */
export type DiffOp =
  { op: 'remove'; path: string; value: JsonValue } | { op: 'add'; path: string; value: JsonValue } | { op: 'replace'; path: string; old: JsonValue; new: JsonValue }

/**
 * The structural differences from `a` to `b`: removals first, then additions, then
 * changes, each in document order. Arrays compare position by position (an appended
 * message is one `add`). Strings compare after NFC normalisation, as hashes do.
 */
export function jsonDiff(a: JsonValue, b: JsonValue): DiffOp[] {
  const removes: DiffOp[] = []
  const adds: DiffOp[] = []
  const replaces: DiffOp[] = []
  const walk = (x: JsonValue, y: JsonValue, path: string, depth: number): void => {
    if (sameScalar(x, y)) return
    assertDepth(depth)
    if (Array.isArray(x) && Array.isArray(y)) {
      const common = Math.min(x.length, y.length)
      for (let i = 0; i < common; i++) walk(x[i]!, y[i]!, childPath(path, i), depth + 1)
      for (let i = common; i < x.length; i++) removes.push({ op: 'remove', path: childPath(path, i), value: x[i]! })
      for (let i = common; i < y.length; i++) adds.push({ op: 'add', path: childPath(path, i), value: y[i]! })
      return
    }
    if (isObject(x) && isObject(y)) {
      for (const k of Object.keys(x)) {
        if (k in y) walk(x[k]!, y[k]!, childPath(path, k), depth + 1)
        else removes.push({ op: 'remove', path: childPath(path, k), value: x[k]! })
      }
      for (const k of Object.keys(y)) if (!(k in x)) adds.push({ op: 'add', path: childPath(path, k), value: y[k]! })
      return
    }
    replaces.push({ op: 'replace', path, old: x, new: y })
  }
  walk(a, b, '$', 0)
  return [...removes, ...adds, ...replaces]
}

function isObject(v: JsonValue): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Equal leaves; `1` and `true` differ, `-0` and `0` do not, NFC-equal strings do not. */
function sameScalar(x: JsonValue, y: JsonValue): boolean {
  if (typeof x === 'string' && typeof y === 'string') return x === y || x.normalize('NFC') === y.normalize('NFC')
  if (typeof x !== 'object' || x === null || typeof y !== 'object' || y === null) return typeof x === typeof y && (x === y || (typeof x === 'number' && x === y))
  return false
}
