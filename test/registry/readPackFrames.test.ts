import { existsSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { compress } from 'zstd-napi'
import { describe, expect, it } from 'vitest'
import { FileWriteError, InvalidPackError } from '../../src/index.js'
import { type Digest, sha256 } from '../../src/objects/digest.js'
import { NO_FRAME_LIMIT, type PackIndex, type ReadIndex, packIndexBytes, parsePackIndex } from '../../src/store/PackIndex.js'
import type { FrameArrivals } from '../../src/registry/pack/readPackFrames.js'
import { readPackFrames } from '../../src/registry/pack/readPackFrames.js'
import { FrameCheckers } from '../../src/registry/pack/FrameCheckers.js'
import type { PackSource } from '../../src/registry/pack/readPackRanges.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/until.js'

/** A pack of these frames (each a list of objects), its checked index, and a source handing it out a frame at a time, counting the frames it has handed out. */
function pack(frames: Buffer[][]) {
  const compressed = frames.map((objects) => compress(Buffer.concat(objects), { checksumFlag: true }))
  const body = Buffer.concat(compressed)
  let at = 0
  const index: PackIndex = {
    kind: 'pack-index',
    schemaVersion: 1,
    pack: sha256(body),
    packSize: body.length,
    frames: frames.map((objects, i) => [compressed[i]!.length, objects.reduce((n, o) => n + o.length, 0)]),
    objects: frames.flat().map((o): [Digest, number, number] => [sha256(o), (at += o.length) - o.length, o.length]),
  }
  const handedOut = { frames: 0 }
  const source: PackSource = {
    where: 'the test pack',
    open: async () => ({
      offset: 0,
      body: (async function* () {
        for (const frame of compressed) {
          handedOut.frames++
          yield frame
        }
      })(),
    }),
  }
  return { index, read: parsePackIndex(packIndexBytes(index), 'the test index', NO_FRAME_LIMIT), source, handedOut }
}

const blob = (i: number, size = 1000) => {
  const bytes = Buffer.alloc(size, i % 251)
  Buffer.from(`blob ${i} `).copy(bytes)
  return bytes
}

/** Each object's bytes to a file of its own in `dir`, named by its place in the pack. */
function writeEach(read: ReadIndex, dir: string): FrameArrivals {
  return { frame: (objects) => objects.map((o) => [{ abs: join(dir, String(read.objects.indexOf(o))), entry: { mode: 0o640 } }]) }
}

describe('readPackFrames: a whole pack checked, frame by frame, on threads', () => {
  it("writes each object's bytes where told, hands back the structured-looking ones, and its index writer gives canonical JSON", async () => {
    const note = Buffer.from('{"kind":"note","schemaVersion":1,"text":"structured"}')
    const { index, read, source } = pack([[note, blob(1)], [blob(2, 70_000)], [blob(3, 0), blob(4)]])
    expect(packIndexBytes(index).equals(canonicalBytes(index))).toBe(true)
    const dir = tempDir('frames')
    const structured: string[] = []
    await readPackFrames({
      source,
      index: read,
      arrivals: {
        frame: (objects, found) => {
          for (const bytes of found.values()) structured.push(bytes.toString())
          return writeEach(read, dir).frame(objects, found)
        },
      },
    })
    expect(structured).toEqual([note.toString()])
    expect(readFileSync(join(dir, '0'))).toEqual(note)
    expect(readFileSync(join(dir, '2'))).toEqual(blob(2, 70_000))
    expect(readFileSync(join(dir, '3'))).toEqual(Buffer.alloc(0))
    expect(readFileSync(join(dir, '4'))).toEqual(blob(4))
  })

  it('a write that fails (the file is there already) is a FileWriteError (exit 2) naming the file', async () => {
    const { read, source } = pack([[blob(1)], [blob(2)]])
    const dir = tempDir('frames')
    writeFileSync(join(dir, '1'), 'in the way')
    const error = await readPackFrames({ source, index: read, arrivals: writeEach(read, dir) }).catch((err: unknown) => err)
    expect(error).toBeInstanceOf(FileWriteError)
    expect((error as FileWriteError).exitCode).toBe(2)
    expect((error as FileWriteError).data).toEqual({ path: join(dir, '1'), code: 'EEXIST' })
  })

  it('a frame declaring bytes its objects do not hold is refused before a thread holds it', async () => {
    const { index, source } = pack([[blob(1)]])
    index.frames[0]![1] += 4096
    index.objects.push([sha256(Buffer.alloc(0)), 1000 + 4096, 0])
    const read = parsePackIndex(packIndexBytes(index), 'the test index', NO_FRAME_LIMIT)
    await expect(readPackFrames({ source, index: read, arrivals: writeEach(read, tempDir('frames')) })).rejects.toThrow(InvalidPackError)
  })

  // more than the 64 MiB the threads may hold, so the reader waits for room when the listener fails
  const big = () => pack(Array.from({ length: 72 }, (_, i) => [blob(i, 1024 * 1024)]))

  it('a listener that fails while the reader waits for room fails the read (no wait for frames no one will free)', async () => {
    const { read, source, handedOut } = big()
    const failing: FrameArrivals = {
      frame: async () => {
        while (handedOut.frames < 60) await new Promise((resolve) => setImmediate(resolve))
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve)) // the reader goes on to the frame it has no room for
        throw new Error('the plan failed')
      },
    }
    await expect(readPackFrames({ source, index: read, arrivals: failing })).rejects.toThrow('the plan failed')
    expect(handedOut.frames).toBeLessThan(72)
  })

  it('an abort while the reader waits for room stops it', async () => {
    const { read, source, handedOut } = big()
    const abort = new AbortController()
    const dir = tempDir('frames')
    const slow: FrameArrivals = {
      frame: async (objects) => {
        while (handedOut.frames < 60) await new Promise((resolve) => setImmediate(resolve))
        abort.abort()
        return writeEach(read, dir).frame(objects, new Map())
      },
    }
    await expect(readPackFrames({ source, index: read, arrivals: slow, signal: abort.signal })).rejects.toThrow(/abort/i)
    expect(existsSync(join(dir, '71'))).toBe(false)
  })
})

describe('FrameCheckers closed while its threads write', () => {
  it('leave no file open: a thread stops between two files, never inside one', async () => {
    const objects = Array.from({ length: 3000 }, (_, i) => blob(i, 64))
    const raw = Buffer.concat(objects)
    let at = 0
    const entries = objects.map((o): [Digest, number, number] => [sha256(o), (at += o.length) - o.length, o.length])
    const dirs: string[] = []
    const openInDirs = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        const target = (() => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`)
          } catch {
            return '' // closed while listed
          }
        })()
        return dirs.some((dir) => target.startsWith(`${dir}/`))
      })
    for (let round = 0; round < 6; round++) {
      const dir = tempDir('closing')
      dirs.push(dir)
      const checkers = new FrameCheckers(2)
      const frames = await Promise.all([0, 1].map(() => checkers.check(compress(raw, { checksumFlag: true }), raw.length, entries)))
      frames.forEach((frame, t) =>
        checkers.write(
          frame,
          objects.map((_, i): [number, string, number] => [i, join(dir, `${t}-${i}`), 0o644]),
        ),
      )
      await until(() => readdirSync(dir).length > 0, 'the first file written')
      await checkers.close()
      expect(readdirSync(dir).length).toBeLessThan(2 * objects.length) // closed while writing
    }
    expect(openInDirs()).toEqual([])
  })
})
