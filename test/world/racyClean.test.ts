import { promises as fs, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, it, vi } from 'vitest'
import { snapshotWorkspace } from '../../src/index.js'
import { scanClock } from '../../src/world/scan/scanWorkspace.js'
import { storeWorkspace } from '../helpers/workspace.js'

afterEach(() => {
  vi.restoreAllMocks()
})

// The scan's clock is set against the file's own mtime: inside the racy window (50 ms) or far
// past it, however slowly a busy machine runs the test.
it('does not vouch for a file written just before the scan (racily clean), and does once it is old enough', async () => {
  const { dir } = await storeWorkspace({ 'a.txt': 'a', 'b.txt': 'b' })
  const clock = vi.spyOn(scanClock, 'now')
  clock.mockImplementation(() => Date.now() + 10_000)
  await snapshotWorkspace({ dir })
  await new Promise((r) => setTimeout(r, 200)) // a.txt well before b.txt's change: only b.txt is in the window
  await fs.writeFile(join(dir, 'b.txt'), 'B')
  const written = statSync(join(dir, 'b.txt')).mtimeMs
  clock.mockReturnValue(written + 10)
  expect((await snapshotWorkspace({ dir })).hashedFiles).toBe(1)
  expect((await snapshotWorkspace({ dir })).hashedFiles).toBe(1) // still too recent to trust: read again
  clock.mockReturnValue(written + 10_000)
  expect((await snapshotWorkspace({ dir })).hashedFiles).toBe(1) // now old enough: read once more, then trusted
  expect((await snapshotWorkspace({ dir })).hashedFiles).toBe(0)
})
