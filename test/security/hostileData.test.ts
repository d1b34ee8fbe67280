import { chmodSync, chownSync, mkdirSync, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { type Digest, sha256 } from '../../src/store/digest.js'
import type { PackIndex } from '../../src/store/PackIndex.js'
import { fileTransport } from '../../src/registry/fileTransport.js'
import { buildPackedImage } from '../../src/registry/imageManifest.js'
import { encodeHeader } from '../../src/registry/packFile.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { runProgram } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'

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

  /** A pack of one object of `declared` bytes whose one frame is `frame`: its index and the bytes. */
  function bombPack(frame: Buffer, object: Buffer): { index: PackIndex; root: Digest } {
    const root = sha256(object)
    const index: PackIndex = {
      kind: 'pack-index',
      schemaVersion: 1,
      pack: sha256(frame),
      packSize: frame.length,
      frames: [[frame.length, object.length]],
      objects: [[root, 0, object.length]],
    }
    return { index, root }
  }

  async function packFileOf(dir: string, frame: Buffer, object: Buffer): Promise<string> {
    const { index, root } = bombPack(frame, object)
    const file = join(dir, 'bomb.fpk')
    await fs.writeFile(file, Buffer.concat([encodeHeader({ kind: 'pack', schemaVersion: 2, root, shallow: [], index }), frame]))
    return file
  }

  /** The same pack as an image tagged `v1` in a file:// layout under `dir`. */
  async function layoutOf(dir: string, frame: Buffer, object: Buffer): Promise<string> {
    const { index, root } = bombPack(frame, object)
    const layout = join(dir, 'layout')
    const transport = fileTransport(layout)
    const put = async (bytes: Buffer) => {
      const file = join(dir, 'blob')
      await fs.writeFile(file, bytes)
      await transport.putBlob({ digest: sha256(bytes), size: bytes.length }, file)
      return { digest: sha256(bytes), size: bytes.length }
    }
    const packs = [{ pack: await put(frame), index: await put(canonicalBytes(index)) }]
    const image = buildPackedImage({ root, packs, config: 'image', objects: 1, bytes: object.length, shallow: [] })
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
      const file = await packFileOf(dir, frame, declared)
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
      const file = await packFileOf(dir, zeroFrame(NOTE, FOUR_GIB_OF_ZEROS), NOTE)
      const result = await inChild(uid, 'unpack', file, store)
      expect(result.exitCode, result.message).toBe(5)
      expect(result.peakRssBytes).toBeLessThan(PEAK_RSS_BYTES)
      expect(result.message).toMatch(new RegExp(`would decompress to more than the ${NOTE.length} bytes its index declares`))
    })
  })
})
