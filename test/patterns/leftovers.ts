import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import type { Workspace } from '../../src/index.js'

const pids = () => readdirSync('/proc').filter((p) => /^\d+$/.test(p) && p !== String(process.pid))
const readOr = (path: string) => {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}
const alive = (pid: string) => readOr(`/proc/${pid}/stat`) !== '' && !readOr(`/proc/${pid}/stat`).includes(') Z ')

/** Processes (not zombies) whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  return pids()
    .filter((p) => readOr(`/proc/${p}/cmdline`).includes(marker) && alive(p))
    .map(Number)
}

/**
 * Nothing a pattern made is left: no live branch, no directory under the store's
 * branches/live, no mount of the workspace or store in this process or in any other (a
 * namespace holder's, a sandbox's), no process holding one.
 */
export function expectNothingLeft(ws: Pick<Workspace, 'dir'> & { store: { root: string } }): void {
  expect(readdirSync(join(ws.store.root, 'branches', 'live')).filter((n) => !n.startsWith('.'))).toEqual([])
  const liveDir = join(ws.store.root, 'branches', 'live')
  expect(readOr('/proc/self/mountinfo')).not.toContain(liveDir)
  const holding = pids().filter((p) => {
    const info = readOr(`/proc/${p}/mountinfo`)
    return alive(p) && (info.includes(liveDir) || info.split('\n').some((line) => line.split(' ')[4] === ws.dir))
  })
  expect(holding).toEqual([])
  expect(processesWith(ws.store.root)).toEqual([])
}

/** The same for a workspace a CLI process used, checked without opening it (an open would clean orphans). */
export const expectNothingLeftIn = (dir: string): void => expectNothingLeft({ dir, store: { root: join(dir, '.forkpoint') } })

export async function expectNoBranches(ws: Workspace): Promise<void> {
  expect(await ws.branches()).toEqual([])
  expectNothingLeft(ws)
}

/** Poll until `cond` holds or `ms` pass (a generous deadline: a busy machine is slow, not wrong); returns whether it held. */
export async function eventually(cond: () => boolean, ms = 30_000): Promise<boolean> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (cond()) return true
    await new Promise((r) => setTimeout(r, 10))
  }
  return cond()
}
