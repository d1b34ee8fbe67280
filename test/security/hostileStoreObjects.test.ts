import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { snapshotWorkspace } from '../../src/index.js'
import { sha256 } from '../../src/objects/digest.js'
import { runCli } from '../helpers/cli.js'
import { fpAsNobody, giveToNobody } from '../helpers/privilegedModes.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

/**
 * A store's object files are data from elsewhere too: git carries symlinks, so a cloned
 * repository holding a `.forkpoint/` can make an object a link to `/dev/zero` (read until
 * memory ends), and an unpacked archive can make one a FIFO (an open waits for a writer).
 * Each read of such an object is refused as a damaged store (exit 5), and `verify` lists it.
 */
const users = process.getuid?.() === 0 ? (['root', 'nobody'] as const) : (['root'] as const)

/** A workspace of loose objects whose snapshot object or `a.txt`'s blob (`which`) is then replaced by `replace(file)`. */
async function replacedObject(which: 'snapshot' | 'blob', replace: (file: string) => void): Promise<string> {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'hello\n', 'b.txt': 'world\n' })
  const { id } = await snapshotWorkspace({ dir })
  const file = store.objectPath(which === 'snapshot' ? id : sha256(Buffer.from('hello\n')))
  expect(readFileSync(file).length).toBeGreaterThan(0)
  rmSync(file)
  replace(file)
  return dir
}

const toDevZero = (file: string) => symlinkSync('/dev/zero', file)
const toFifo = (file: string) => execFileSync('mkfifo', [file])

describe.each(users)('a store whose object file is not a regular file (as %s)', (user) => {
  // a separate process for root too: an open of a FIFO would block the process it runs in
  const fp = (dir: string, ...args: string[]) => {
    if (user === 'root') return runCli(args, { cwd: dir })
    giveToNobody(dir)
    return fpAsNobody(dir, ...args)
  }
  /** A directory of the user's own, for what a command writes. */
  const own = (dir: string) => (user === 'nobody' ? (giveToNobody(dir), dir) : dir)
  const refused = async (dir: string, ...args: string[]) => {
    const run = await fp(dir, ...args)
    expect(run.code, run.stderr).toBe(5)
    expect(run.stderr).toMatch(/is not a regular file/)
  }

  it('refuses a snapshot object that is a symlink to /dev/zero (exit 5) instead of reading it until memory ends', async () => {
    await refused(await replacedObject('snapshot', toDevZero), 'log')
  })

  it('refuses a snapshot object that is a FIFO (exit 5) instead of waiting for a writer', async () => {
    await refused(await replacedObject('snapshot', toFifo), 'log')
  })

  it('refuses a file content that is a FIFO in show, checkout --into and push (exit 5), and verify lists it', async () => {
    const dir = await replacedObject('blob', toFifo)
    await refused(dir, 'show', 'HEAD:a.txt')
    await refused(dir, 'checkout', 'HEAD', '--into', join(own(tempDir('into')), 'out'))
    await refused(dir, 'push', 'HEAD', `file://${own(tempDir('layout'))}:v1`)
    const verified = await fp(dir, 'verify')
    expect(verified.code).toBe(5)
    expect(verified.stdout).toMatch(/corrupt: sha256:[0-9a-f]{64} \(hashes to damaged\)/)
  })

  it('refuses a file content that is a symlink to /dev/zero in show (exit 5)', async () => {
    await refused(await replacedObject('blob', toDevZero), 'show', 'HEAD:a.txt')
  })
})
