import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { cloneImage, pushImage, snapshotWorkspace } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { makeImage, remotePacks, treeListing } from './fixtures.js'
import { useRemotes } from './remotes.js'

const remotes = useRemotes()
const run = promisify(execFile)

/** `skopeo ARGS`: its stdout, or a rejection carrying its stderr. */
async function skopeo(...args: string[]): Promise<string> {
  return (await run('skopeo', args, { maxBuffer: 16 * 1024 * 1024 })).stdout
}

const layoutOf = (remote: string) => remote.slice('file://'.length, remote.lastIndexOf(':'))

describe('standard OCI tools read our images', () => {
  it('plain skopeo inspect works on a file:// layout and on the registry', async () => {
    const image = await makeImage({ 'a.txt': 'inspect me' })
    const file = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote: file, credentials: null })
    const fromLayout = JSON.parse(await skopeo('inspect', `oci:${layoutOf(file)}:v1`)) as { Layers: string[] }
    expect(fromLayout.Layers).toHaveLength(2) // the pack's index and the pack
    expect(fromLayout.Layers).toContain((await remotePacks(file))[0])

    const oci = remotes.remote('oci')
    await pushImage({ store: image.store, id: image.id, remote: oci, credentials: null })
    const fromRegistry = JSON.parse(await skopeo('inspect', '--tls-verify=false', `docker://${oci.slice('oci://'.length)}`)) as { Layers: string[] }
    expect(fromRegistry.Layers).toContain((await remotePacks(oci))[0])
  })

  it('a layout written by skopeo copy --all (from a layout or the registry) can be cloned', async () => {
    const image = await makeImage({ 'a.txt': 'copied', 'd/b.txt': 'along', l: { symlink: 'a.txt' } })
    const file = remotes.remote('file')
    const oci = remotes.remote('oci')
    await pushImage({ store: image.store, id: image.id, remote: file, credentials: null })
    await pushImage({ store: image.store, id: image.id, remote: oci, credentials: null })
    for (const source of [`oci:${layoutOf(file)}:v1`, `docker://${oci.slice('oci://'.length)}`]) {
      const copy = tempDir('skopeo-copy')
      await skopeo('copy', '--all', '--src-tls-verify=false', source, `oci:${copy}:copied`)
      const into = join(tempDir('clone'), 'out')
      const cloned = await cloneImage({ remote: `file://${copy}:copied`, into, store: join(tempDir('store'), 'st'), credentials: null })
      expect(cloned.id).toBe(image.id)
      expect(await treeListing(into)).toEqual(await treeListing(image.dir))
    }
  })

  it('a plain skopeo copy (the packs manifest alone, from a layout or the registry) can be cloned, shallow too', async () => {
    const first = await makeImage({ 'a.txt': 'copied alone', 'd/b.txt': 'along' })
    await writeFile(join(first.dir, 'a.txt'), 'copied alone, second')
    const image = { ...first, id: (await snapshotWorkspace({ dir: first.dir, message: 'second' })).id }
    const file = remotes.remote('file')
    const oci = remotes.remote('oci')
    await pushImage({ store: image.store, id: image.id, remote: file, credentials: null })
    await pushImage({ store: image.store, id: image.id, remote: oci, credentials: null, depth: 1 }) // shallow: its parent left out
    for (const source of [`oci:${layoutOf(file)}:v1`, `docker://${oci.slice('oci://'.length)}`]) {
      const copy = tempDir('skopeo-plain')
      await skopeo('copy', '--src-tls-verify=false', source, `oci:${copy}:copied`)
      const into = join(tempDir('clone'), 'out')
      const cloned = await cloneImage({ remote: `file://${copy}:copied`, into, store: join(tempDir('store'), 'st'), credentials: null })
      expect(cloned.id).toBe(image.id)
      expect(await treeListing(into)).toEqual(await treeListing(image.dir))
    }
  })
})
