import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { Workspace } from '../../src/index.js'
import { makeWorkspace } from '../helpers/tmp.js'

/**
 * Whether the overlay backend works is tried once per user and boot and kept in the store,
 * so a CLI command does not mount a probe every time: a kept answer is used as it is, one
 * from another boot (maybe another kernel) is asked again.
 */
const uid = process.getuid?.() ?? 'user'
const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()

it('keeps the overlay probe in the store per user and boot, and uses the kept answer', async () => {
  const dir = await makeWorkspace({ 'a.txt': 'a' })
  const first = await Workspace.open({ dir })
  const b = await first.branch('probed')
  expect(b.backend).toBe('overlay')
  await b.abort()
  const kept = join(first.store.root, 'branches', 'probes', `overlay.${uid}`)
  expect(await fs.readFile(kept, 'utf8')).toBe(`${bootId} works`)

  // another store holding the same answers (what a later CLI process reads): say it failed this boot
  await fs.writeFile(kept, `${bootId} fails`)
  const other = await makeWorkspace({ 'a.txt': 'a' })
  await fs.cp(first.store.root, join(other, '.forkpoint'), { recursive: true })
  const reader = await Workspace.open({ dir: other })
  const c = await reader.branch('not-overlay')
  expect(c.backend).not.toBe('overlay')
  await c.abort()

  // from another boot: asked again, and overlay works
  const third = await makeWorkspace({ 'a.txt': 'a' })
  await fs.cp(first.store.root, join(third, '.forkpoint'), { recursive: true })
  await fs.writeFile(join(third, '.forkpoint', 'branches', 'probes', `overlay.${uid}`), 'another-boot fails')
  const d = await (await Workspace.open({ dir: third })).branch('again')
  expect(d.backend).toBe('overlay')
  await d.abort()
  expect(await fs.readFile(join(third, '.forkpoint', 'branches', 'probes', `overlay.${uid}`), 'utf8')).toBe(`${bootId} works`)
})
