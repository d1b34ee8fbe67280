import { promises as fs } from 'node:fs'
import { atomicWrite } from '../util/atomicWrite.js'
import { inParentDir } from '../util/fsx.js'
import { appendUntrustedSync } from '../util/untrustedRead.js'
import { notRegular } from './readObjectBytes.js'
import { readStateTextOrNull } from './readStateFile.js'
import { type Digest, isDigest } from '../objects/digest.js'
import type { Store } from './Store.js'

export interface ReflogEntry {
  old: Digest | null
  new: Digest
  at: string
  message: string
}

function reflogPath(store: Store, ref: string): string {
  return store.path('logs', ref)
}

/** Append one line (JSON) to a ref's log. Appends of one short line are atomic on POSIX. */
export async function appendReflog(store: Store, ref: string, entry: Omit<ReflogEntry, 'at'>): Promise<void> {
  const path = reflogPath(store, ref)
  const line = `${JSON.stringify({ ...entry, at: new Date().toISOString() })}\n`
  inParentDir(path, () => appendUntrustedSync(path, line, () => notRegular(path)))
}

/** A ref's log, oldest first. Torn or foreign lines are skipped, never fatal. */
export async function readReflog(store: Store, ref: string): Promise<ReflogEntry[]> {
  const text = readStateTextOrNull(reflogPath(store, ref))
  if (text === null) return []
  const entries: ReflogEntry[] = []
  for (const line of text.split('\n')) {
    if (!line) continue
    try {
      const e = JSON.parse(line) as ReflogEntry
      if (isDigest(e.new)) entries.push(e)
    } catch {
      // a line torn by a crash mid-append carries nothing we can use
    }
  }
  return entries
}

/** Every ref that has a log (for gc roots). */
export async function listReflogs(store: Store): Promise<string[]> {
  const out: string[] = []
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const e of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const name = prefix ? `${prefix}/${e.name}` : e.name
      if (e.isDirectory()) await walk(`${dir}/${e.name}`, name)
      else out.push(name)
    }
  }
  await walk(store.path('logs'), '')
  return out
}

/** Kept unless older than `cutoff` (null: kept always); an entry whose time does not parse is kept. */
export function isLive(entry: ReflogEntry, cutoff: Date | null): boolean {
  const at = Date.parse(entry.at)
  return cutoff === null || Number.isNaN(at) || at >= cutoff.getTime()
}

/**
 * Drop every reflog entry older than `cutoff`, as `git reflog expire` does; a log left
 * empty (a deleted tag's, say) is removed. Call with writers excluded (gc's lock).
 * Returns how many entries went.
 */
export async function expireReflogs(store: Store, cutoff: Date | null): Promise<number> {
  let expired = 0
  for (const log of await listReflogs(store)) {
    const entries = await readReflog(store, log)
    const live = entries.filter((e) => isLive(e, cutoff))
    if (live.length === entries.length) continue
    expired += entries.length - live.length
    const path = reflogPath(store, log)
    if (live.length === 0) await fs.rm(path, { force: true })
    else await atomicWrite(path, live.map((e) => `${JSON.stringify(e)}\n`).join(''), { fsync: true })
  }
  return expired
}
