import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { cloneImage, pushImage, snapshotWorkspace } from '../../src/index.js'
import { MediaType } from '../../src/registry/manifest/mediaTypes.js'
import { sha256 } from '../../src/objects/digest.js'
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
  it('skopeo inspect --raw shows an OCI 1.1 artifact: the tagged index, and a packs manifest with the empty config', async () => {
    const image = await makeImage({ 'a.txt': 'inspect me' })
    const file = remotes.remote('file')
    const oci = remotes.remote('oci')
    await pushImage({ store: image.store, id: image.id, remote: file, credentials: null })
    const pushed = await pushImage({ store: image.store, id: image.id, remote: oci, credentials: null })
    const repository = `docker://${oci.slice('oci://'.length, oci.lastIndexOf(':'))}`
    for (const source of [`oci:${layoutOf(file)}:v1`, `${repository}:v1`]) {
      const index = JSON.parse(await skopeo('inspect', '--raw', '--tls-verify=false', source)) as { artifactType: string; manifests: Array<{ digest: string }> }
      expect(index.artifactType).toBe(MediaType.image)
      expect(index.manifests).toHaveLength(1)
    }
    const rawIndex = await skopeo('inspect', '--raw', '--tls-verify=false', `${repository}@${pushed.manifest}`)
    const manifestDigest = (JSON.parse(rawIndex) as { manifests: Array<{ digest: string }> }).manifests[0]!.digest
    const manifest = JSON.parse(await skopeo('inspect', '--raw', '--tls-verify=false', `${repository}@${manifestDigest}`)) as {
      artifactType: string
      config: unknown
      layers: Array<{ digest: string }>
    }
    expect(manifest.artifactType).toBe(MediaType.packs)
    expect(manifest.config).toEqual({ mediaType: 'application/vnd.oci.empty.v1+json', digest: sha256('{}'), size: 2 })
    expect(manifest.layers.map((l) => l.digest)).toContain((await remotePacks(oci))[0])
    // plain inspect reads an image config, which an artifact has not
    await expect(skopeo('inspect', `oci:${layoutOf(file)}:v1`)).rejects.toThrow(/artifact with type \\?"application\/vnd\.oci\.empty\.v1\+json/)
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

describe('container tools refuse our images as no container image', () => {
  /** `podman pull SOURCE` with a storage of its own (vfs: no overlay mount needed); its rejection carries its stderr. */
  async function podmanPull(source: string): Promise<string> {
    const dir = tempDir('podman')
    const storage = ['--root', join(dir, 'root'), '--runroot', join(dir, 'run'), '--tmpdir', join(dir, 'tmp'), '--storage-driver', 'vfs']
    return (await run('podman', [...storage, '--events-backend', 'none', '--cgroup-manager', 'cgroupfs', 'pull', '--tls-verify=false', source])).stdout
  }

  it('podman pull fails saying the image is an artifact, not with a tar error', async () => {
    const image = await makeImage({ 'a.txt': 'not a container' })
    const oci = remotes.remote('oci')
    await pushImage({ store: image.store, id: image.id, remote: oci, credentials: null })
    const refusal = await podmanPull(`docker://${oci.slice('oci://'.length)}`).then(
      (stdout) => `pulled: ${stdout}`,
      (err: { stderr: string }) => err.stderr,
    )
    expect(refusal).toMatch(/unsupported image-specific operation on artifact with type "application\/vnd\.oci\.empty\.v1\+json"/)
    expect(refusal).not.toMatch(/tar/)
  })
})
