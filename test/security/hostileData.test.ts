import { generateKeyPairSync } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, promises as fs, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compress } from 'zstd-napi'
import { SignatureError, UsageError, pullImage, pushImage } from '../../src/index.js'
import { openTransport } from '../../src/registry/openTransport.js'
import { parseRemote } from '../../src/registry/parseRemote.js'
import { MediaType } from '../../src/registry/mediaTypes.js'
import { sha256 } from '../../src/store/digest.js'
import { fileTransport } from '../../src/registry/fileTransport.js'
import { buildPackedImage } from '../../src/registry/imageManifest.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { runProgram } from '../helpers/cli.js'
import { type RegistryServer, startRegistry } from '../helpers/registryServer.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, expectRefusedUntouched, makeImage, onePackIndex, writeOnePackFile } from '../registry/fixtures.js'

describe('registry: packs, layouts and signatures from elsewhere', () => {
  const NOBODY = 65534
  const asRoot = process.getuid?.() === 0
  const CHILD = fileURLToPath(new URL('../helpers/registryChild.ts', import.meta.url))
  const PEAK_RSS_BYTES = 300 * 1024 * 1024
  const NOTE = Buffer.from('{"kind":"note","schemaVersion":1,"text":"an honest object before the zeros"}')

  /**
   * One zstd frame written by hand: `raw` as a raw block, then `zeroBlocks` RLE blocks of
   * 128 KiB of zeros (4 bytes each: 4 GiB of zeros cost 128 KiB), no content size, no checksum.
   */
  function zeroFrame(raw: Buffer, zeroBlocks: number): Buffer {
    const BLOCK = 128 * 1024
    const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]) // magic, no content size, a 128 KiB window
    const block = (type: number, size: number, last: boolean) => Buffer.from([((size << 3) | (type << 1) | Number(last)) & 0xff, (size >> 5) & 0xff, (size >> 13) & 0xff])
    const parts: Buffer[] = [header]
    if (raw.length > 0) parts.push(block(0, raw.length, zeroBlocks === 0), raw)
    for (let i = 0; i < zeroBlocks; i++) parts.push(block(1, BLOCK, i === zeroBlocks - 1), Buffer.from([0]))
    return Buffer.concat(parts)
  }

  /** The same pack as an image tagged `v1` in a file:// layout under `dir`. */
  async function layoutOf(dir: string, frame: Buffer, object: Buffer): Promise<string> {
    const index = onePackIndex(frame, object)
    const layout = join(dir, 'layout')
    const transport = fileTransport(layout)
    const put = async (bytes: Buffer) => {
      const file = join(dir, 'blob')
      await fs.writeFile(file, bytes)
      await transport.putBlob({ digest: sha256(bytes), size: bytes.length }, file)
      return { digest: sha256(bytes), size: bytes.length }
    }
    const packs = [{ pack: await put(frame), index: await put(canonicalBytes(index)) }]
    const image = buildPackedImage({ root: sha256(object), packs, config: 'image', objects: 1, bytes: object.length, shallow: [] })
    await transport.putManifest(image.manifest)
    await transport.putManifest(image.index, 'v1')
    return `file://${layout}:v1`
  }

  /** A directory the caller (root or nobody) can read, holding one it can write. */
  function workDir(uid: number): { dir: string; store: string } {
    const dir = tempDir('hostile-registry')
    chmodSync(dir, 0o755)
    const store = join(dir, 'stores')
    mkdirSync(store)
    chownSync(store, uid, uid)
    return { dir, store: join(store, '.forkpoint') }
  }

  /** Run the operation in a child process as `uid`: the exit code its error carries and its peak RSS. */
  async function inChild(uid: number, op: 'unpack' | 'pull', input: string, store: string): Promise<{ exitCode: number; message: string; peakRssBytes: number }> {
    const node = [process.execPath, '--import', 'tsx', CHILD, op, input, store]
    const argv = uid === 0 ? node : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...node]
    const r = await runProgram(argv, { cwd: fileURLToPath(new URL('../..', import.meta.url)), env: { HOME: join(store, '..') } })
    const line = r.stdout.trim().split('\n').pop() ?? ''
    if (!line.startsWith('{')) throw new Error(`the child exited ${r.code} without a report:\n${r.stdout}\n${r.stderr}`)
    return JSON.parse(line) as { exitCode: number; message: string; peakRssBytes: number }
  }

  const callers = asRoot ? [0, NOBODY] : [process.getuid?.() ?? 0]

  describe.each(callers)('zstd bombs stop at the size the index declares, in bounded memory (uid %i)', (uid) => {
    const FOUR_GIB_OF_ZEROS = 32 * 1024 // RLE blocks of 128 KiB

    it('a frame of 4 GiB of zeros whose index declares 3.5 KB: unpack and pull refuse it (exit 5) with peak RSS under 300 MB', async () => {
      const { dir, store } = workDir(uid)
      const declared = Buffer.alloc(3584)
      const frame = zeroFrame(Buffer.alloc(0), FOUR_GIB_OF_ZEROS)
      expect(frame.length).toBeLessThan(140 * 1024)
      const file = await writeOnePackFile(join(dir, 'bomb.fpk'), frame, declared)
      const remote = await layoutOf(dir, frame, declared)
      for (const [op, input] of [
        ['unpack', file],
        ['pull', remote],
      ] as const) {
        const result = await inChild(uid, op, input, `${store}-${op}`)
        expect(result.exitCode, result.message).toBe(5)
        expect(result.peakRssBytes).toBeLessThan(PEAK_RSS_BYTES)
        expect(result.message).toMatch(/would decompress to more than the 3584 bytes its index declares/)
      }
    })

    it('a pack whose honest object goes on with a 4 GiB zero tail: refused (exit 5) with peak RSS under 300 MB', async () => {
      const { dir, store } = workDir(uid)
      const file = await writeOnePackFile(join(dir, 'bomb.fpk'), zeroFrame(NOTE, FOUR_GIB_OF_ZEROS), NOTE)
      const result = await inChild(uid, 'unpack', file, store)
      expect(result.exitCode, result.message).toBe(5)
      expect(result.peakRssBytes).toBeLessThan(PEAK_RSS_BYTES)
      expect(result.message).toMatch(new RegExp(`would decompress to more than the ${NOTE.length} bytes its index declares`))
    })
  })

  describe.each(callers)('a pack of the first format (a zstd tar) is not read at all (uid %i)', (uid) => {
    /** A zstd-compressed tar of a manifest and one object, as the first format had it (built with GNU tar), its tar cut to `keep` bytes when given. */
    function firstFormatPack(dir: string, keep?: number): string {
      const object = Buffer.from('{"kind":"note","schemaVersion":1,"text":"a note in a first-format pack, long enough to be cut"}')
      const hex = sha256(object).slice(7)
      const tree = join(dir, `tar-${keep ?? 'whole'}`)
      mkdirSync(join(tree, 'objects/sha256'), { recursive: true })
      writeFileSync(join(tree, 'objects/sha256', hex), object)
      writeFileSync(
        join(tree, 'forkpoint-pack.json'),
        canonicalBytes({ kind: 'pack', schemaVersion: 1, root: sha256(object), objects: [{ digest: sha256(object), size: object.length }] }),
      )
      const tar = execFileSync('tar', ['--format=ustar', '--owner=0', '--group=0', '--mtime=@0', '-cf', '-', '-C', tree, 'forkpoint-pack.json', `objects/sha256/${hex}`])
      const file = join(dir, `first-${keep ?? 'whole'}.fpk`)
      writeFileSync(file, compress(keep === undefined ? tar : tar.subarray(0, keep)))
      return file
    }

    it('cut inside its first entry (the tar reader then threw from an event handler and the process died), or whole: exit 5, the process lives', async () => {
      const { dir, store } = workDir(uid)
      for (const keep of [600, undefined]) {
        const result = await inChild(uid, 'unpack', firstFormatPack(dir, keep), `${store}-${keep ?? 'whole'}`)
        expect(result.exitCode, result.message).toBe(5)
        expect(result.message).toMatch(/is not a forkpoint pack/)
      }
    })
  })

  describe.each(callers)('an OCI layout is checked before any of it names a file (uid %i)', (uid) => {
    /** A layout holding a pushed image, its index.json then replaced by `entries` (as JSON). */
    async function hostileLayout(entries: (pushed: { digest: string; size: number }) => unknown[]): Promise<{ remote: string; store: string }> {
      const { dir, store } = workDir(uid)
      const image = await makeImage({ 'a.txt': 'alpha' })
      const layout = join(dir, 'layout')
      const pushed = await pushImage({ store: image.store, id: image.id, remote: `file://${layout}:v1`, credentials: null })
      const manifests = entries({ digest: pushed.manifest, size: (await fs.stat(join(layout, 'blobs/sha256', pushed.manifest.slice(7)))).size })
      await fs.writeFile(join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, manifests }))
      return { remote: `file://${layout}:v1`, store }
    }
    const tagged = (fields: object) => ({ mediaType: 'application/vnd.oci.image.index.v1+json', annotations: { 'org.opencontainers.image.ref.name': 'v1' }, ...fields })

    it.each([
      ['manifests: [null]', (p: { digest: string; size: number }) => [null, tagged(p)], /manifests\.0/],
      ['a numeric digest', (p: { digest: string; size: number }) => [tagged({ digest: 5, size: p.size })], /manifests\.0\.digest/],
      [
        'a digest naming ../../../etc/passwd',
        (p: { digest: string; size: number }) => [tagged({ digest: 'sha256:../../../../../../etc/passwd', size: p.size })],
        /manifests\.0\.digest/,
      ],
      [
        'an annotation that is not a string',
        (p: { digest: string; size: number }) => [{ ...tagged(p), annotations: { 'org.opencontainers.image.ref.name': 'v1', n: 5 } }],
        /manifests\.0\.annotations/,
      ],
    ])('%s: the pull refuses the layout as malformed before any entry names a file (exit 5)', async (_what, entries, where) => {
      const { remote, store } = await hostileLayout(entries)
      const result = await inChild(uid, 'pull', remote, store)
      expect(result.exitCode, result.message).toBe(5)
      expect(result.message).toMatch(/the layout index .* is malformed/)
      expect(result.message).toMatch(where)
    })
  })

  describe('a signature holds for the image where it was pushed: its digest, repository and tag', () => {
    let registry: RegistryServer
    beforeAll(async () => {
      registry = await startRegistry({ dir: tempDir('registry') })
    })
    afterAll(async () => {
      await registry?.stop()
    })

    const keys = () => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519')
      return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() }
    }

    /** Point `tag` of the repository at the index `from` names, as someone with write access to it could. */
    async function retag(from: string, tag: string): Promise<void> {
      const transport = await openTransport(parseRemote(from), { credentials: null })
      const { bytes } = (await transport.getManifest(from.slice(from.lastIndexOf(':') + 1)))!
      await transport.putManifest({ descriptor: { mediaType: MediaType.index, digest: sha256(bytes), size: bytes.length, artifactType: MediaType.image }, bytes }, tag)
    }

    const expectUnverified = (remote: string, verifyKey: string) => expectRefusedUntouched((store) => pullImage({ store, remote, verifyKey, credentials: null }), SignatureError)

    it.each(['file', 'oci'] as const)('%s: a signed image re-tagged under another name (tag substitution, rollback) fails verification (exit 5)', async (kind) => {
      const key = keys()
      const image = await makeImage({ 'a.txt': 'release 1' })
      const repository = kind === 'file' ? `file://${tempDir('layout')}` : `oci://${registry.host}/team/signed`
      const pushed = await pushImage({ store: image.store, id: image.id, remote: `${repository}:v1`, signingKey: key.privateKey, credentials: null })
      expect((await pullImage({ store: await emptyStore(), remote: `${repository}:v1`, verifyKey: key.publicKey, credentials: null })).verified).toBe(true)
      await retag(`${repository}:v1`, 'v2')
      const { error } = await expectUnverified(`${repository}:v2`, key.publicKey)
      expect(error.message).toMatch(/not signed by the given key as .*:v2/)
      // by digest the image itself is pinned: the signature of its repository holds, under whichever tag
      expect((await pullImage({ store: await emptyStore(), remote: `${repository}@${pushed.manifest}`, verifyKey: key.publicKey, credentials: null })).verified).toBe(true)
    })

    it('a signed layout moved to another place fails verification (exit 5); an image signed under two tags verifies under both', async () => {
      const key = keys()
      const image = await makeImage({ 'a.txt': 'release 2' })
      const layout = tempDir('layout')
      for (const tag of ['v2', 'latest']) await pushImage({ store: image.store, id: image.id, remote: `file://${layout}:${tag}`, signingKey: key.privateKey, credentials: null })
      for (const tag of ['v2', 'latest']) {
        expect((await pullImage({ store: await emptyStore(), remote: `file://${layout}:${tag}`, verifyKey: key.publicKey, credentials: null })).verified).toBe(true)
      }
      const moved = join(tempDir('moved'), 'layout')
      await fs.cp(layout, moved, { recursive: true })
      await expectUnverified(`file://${moved}:v2`, key.publicKey)
    })

    it('a malformed PEM, or a directory, given as the key is a usage error (exit 2) naming what is wrong', async () => {
      const image = await makeImage({ 'a.txt': 'signed' })
      const remote = `file://${tempDir('layout')}:v1`
      await pushImage({ store: image.store, id: image.id, remote, signingKey: keys().privateKey, credentials: null })
      const malformed = '-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n'
      for (const [verifyKey, message] of [
        [malformed, /verify key is not a valid PEM key/],
        [tempDir('not-a-key'), /verify key names a directory, not a PEM file/],
      ] as const) {
        const error = (await pullImage({ store: await emptyStore(), remote, verifyKey, credentials: null }).catch((e: unknown) => e)) as UsageError
        expect(error).toBeInstanceOf(UsageError)
        expect(error.exitCode).toBe(2)
        expect(error.message).toMatch(message)
      }
      const error = (await pushImage({ store: image.store, id: image.id, remote, signingKey: malformed, credentials: null }).catch((e: unknown) => e)) as UsageError
      expect(error).toBeInstanceOf(UsageError)
      expect(error.exitCode).toBe(2)
    })
  })
})
