import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { checkout, snapshotWorkspace } from '../../src/index.js'
import { updateRef } from '../../src/store/refs.js'
import { storeWorkspace } from './workspace.js'

/** A clean workspace on `main` whose branch `other` changed the same line of `f.txt`: merging `other` stops on a conflict. */
export async function conflictingHeads(): Promise<{ dir: string }> {
  const { dir, store } = await storeWorkspace({ 'f.txt': '1\n2\n3\n' })
  const base = (await snapshotWorkspace({ dir, message: 'base' })).id
  await updateRef({ store, name: 'refs/heads/other', id: base, message: 'branch' })
  await checkout({ dir, id: 'other' })
  await fs.writeFile(join(dir, 'f.txt'), '1\ntheirs\n3\n')
  await snapshotWorkspace({ dir, message: 'theirs' })
  await checkout({ dir, id: 'main' })
  await fs.writeFile(join(dir, 'f.txt'), '1\nours\n3\n')
  await snapshotWorkspace({ dir, message: 'ours' })
  return { dir }
}
