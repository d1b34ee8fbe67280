import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compress, decompress } from 'zstd-napi'
import { snapshotWorkspace } from '../../src/index.js'
import { sha256 } from '../../src/objects/digest.js'
import { type PackIndex, packIndexBytes } from '../../src/store/PackIndex.js'
import { LocalPacks } from '../../src/store/LocalPacks.js'
import { PACK_MIN_OBJECTS } from '../../src/world/scan/scanWorkspace.js'
import { runCli } from '../helpers/cli.js'
import { fpAs, fpAsNobody, giveToNobody } from '../helpers/privilegedModes.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { randomFiles } from '../registry/fixtures.js'

/**
 * A workspace's own store is data from elsewhere too (a cloned repository may hold a
 * `.forkpoint/`): a push sends a frame its packs hold as it is only when it is one zstd
 * frame as a pack writer makes it, in no more bytes than zstd can need, decoding as a pull
 * decodes it to exactly the objects its index names, each matching its digest. Any other
 * frame is built anew from its objects, or the push refused (exit 5).
 */
const MARKER = Buffer.from('bytes-smuggled-along-with-a-frame')
const EMPTY = sha256(Buffer.alloc(0))
const users = process.getuid?.() === 0 ? (['root', 'nobody'] as const) : (['root'] as const)

/** A skippable zstd frame carrying `payload`. */
function skippable(payload: Buffer): Buffer {
  const header = Buffer.alloc(8)
  header.writeUInt32LE(0x184d2a50, 0)
  header.writeUInt32LE(payload.length, 4)
  return Buffer.concat([header, payload])
}

/** `raw` as a zstd frame of raw blocks of 128 KiB after `lead` (bytes of blocks), its header declaring a window of 2^(10 + `windowExponent`) bytes and neither its size nor a checksum. */
function rawBlocksFrame(raw: Buffer, windowExponent: number, lead = Buffer.alloc(0)): Buffer {
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, windowExponent << 3]), lead]
  for (let at = 0; at < raw.length; at += 131072) {
    const block = raw.subarray(at, at + 131072)
    const header = (at + 131072 >= raw.length ? 1 : 0) | (block.length << 3)
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff]), block)
  }
  return Buffer.concat(parts)
}

/** A workspace snapshotted cold (its store holds one pack, file contents first, an empty file among them), its pack and index then changed by `edit`. */
async function editedWorkspace(edit: (index: PackIndex, pack: Buffer) => Buffer): Promise<{ dir: string; layout: string }> {
  const { dir, store } = await storeWorkspace({ ...randomFiles(PACK_MIN_OBJECTS + 400, 3000, 11), 'empty.txt': '' })
  await snapshotWorkspace({ dir })
  const [name] = readdirSync(store.packs.dir).filter((n) => n.endsWith('.idx'))
  const indexFile = join(store.packs.dir, name!)
  const index = JSON.parse(readFileSync(indexFile, 'utf8')) as PackIndex
  const packFile = LocalPacks.packFile(store.packs.dir, index.pack)
  writeFileSync(packFile, edit(index, readFileSync(packFile)))
  writeFileSync(indexFile, packIndexBytes(index))
  return { dir, layout: tempDir('layout') }
}

/** Frame 0 of the pack replaced by `tamper` of its compressed bytes (it holds file contents only). */
const frame0 =
  (tamper: (compressed: Buffer) => Buffer) =>
  (index: PackIndex, pack: Buffer): Buffer => {
    const [length] = index.frames[0]!
    const frame = tamper(pack.subarray(0, length))
    index.frames[0]![0] = frame.length
    index.packSize += frame.length - length
    return Buffer.concat([frame, pack.subarray(length)])
  }

/** Every byte a layout holds, its blobs concatenated. */
function layoutBytes(layout: string): Buffer {
  const blobs = join(layout, 'blobs', 'sha256')
  return existsSync(blobs) ? Buffer.concat(readdirSync(blobs).map((b) => readFileSync(join(blobs, b)))) : Buffer.alloc(0)
}

describe.each(users)('a push from a store whose pack was edited (as %s)', (user) => {
  const push = async ({ dir, layout }: { dir: string; layout: string }) => {
    if (user === 'nobody') {
      giveToNobody(dir)
      giveToNobody(layout)
    }
    return fpAs(user, dir, 'push', 'HEAD', `file://${layout}:v1`)
  }
  /** The push succeeds, and what it sent holds neither `absent` nor more bytes than `most`. */
  const pushedWithout = async (workspace: { dir: string; layout: string }, absent: Buffer, most = 8 * 1024 * 1024) => {
    const pushed = await push(workspace)
    expect(pushed.code, pushed.stderr).toBe(0)
    const sent = layoutBytes(workspace.layout)
    expect(sent.length).toBeGreaterThan(0)
    expect(sent.length).toBeLessThan(most)
    expect(sent.includes(absent)).toBe(false)
  }

  it('does not carry a skippable frame appended to an honest one: the frame is built anew from its objects', async () => {
    await pushedWithout(await editedWorkspace(frame0((frame) => Buffer.concat([frame, skippable(MARKER)]))), MARKER)
  })

  it('does not carry a frame of no bytes, holding the empty file, whose bytes are a skippable frame', async () => {
    const workspace = await editedWorkspace((index, pack) => {
      const carrier = skippable(MARKER)
      index.objects = [[EMPTY, 0, 0], ...index.objects.filter(([digest]) => digest !== EMPTY)]
      index.frames.unshift([carrier.length, 0])
      index.packSize += carrier.length
      return Buffer.concat([carrier, pack])
    })
    await pushedWithout(workspace, MARKER)
  })

  it('does not carry a frame padded with 3 million empty blocks (9 MB for 1 MB): sent bytes stay bounded by the image', async () => {
    let padded: Buffer = Buffer.alloc(0)
    const workspace = await editedWorkspace(frame0((frame) => (padded = rawBlocksFrame(Buffer.from(decompress(frame)), 10, Buffer.alloc(3 * 3_000_000)))))
    await pushedWithout(workspace, padded.subarray(0, 4096))
  })

  it('does not carry a frame declaring a 2 GiB window, which a pull reading it by range would refuse', async () => {
    let wide: Buffer = Buffer.alloc(0)
    const workspace = await editedWorkspace(frame0((frame) => (wide = rawBlocksFrame(Buffer.from(decompress(frame)), 21))))
    await pushedWithout(workspace, wide.subarray(0, 4096))
  })

  it('refuses a frame that decompresses as its index says but to other bytes than its digests name (exit 5), and tags nothing', async () => {
    const workspace = await editedWorkspace(
      frame0((frame) => {
        const raw = Buffer.from(decompress(frame))
        raw.set(MARKER, 100) // inside the frame's first file
        return Buffer.from(compress(raw, { compressionLevel: 1, checksumFlag: true }))
      }),
    )
    const pushed = await push(workspace)
    expect(pushed.code, pushed.stdout).toBe(5)
    expect(pushed.stderr).toMatch(/sha256:[0-9a-f]{64}/)
    const tags = join(workspace.layout, 'index.json')
    expect(existsSync(tags) ? readFileSync(tags, 'utf8') : '').not.toMatch(/"v1"/)
    expect(layoutBytes(workspace.layout).includes(MARKER)).toBe(false)
  })

  it('refuses an index declaring a frame of 5 GB (exit 5, not a crash), and tags nothing', async () => {
    const workspace = await editedWorkspace((index, pack) => {
      const last = index.frames.at(-1)!
      index.packSize += 5e9 - last[0]
      last[0] = 5e9
      return pack
    })
    const pushed = await push(workspace)
    expect(pushed.code, pushed.stderr).toBe(5)
    expect(pushed.stderr).toMatch(/is damaged at frame/)
  })
})

/** A workspace snapshotted cold whose pack file or index file (`which`) is then replaced by `replace(file, itsBytes)`. */
async function replacedWorkspace(which: 'pack' | 'index', replace: (file: string, bytes: Buffer) => void): Promise<{ dir: string; layout: string }> {
  const { dir, store } = await storeWorkspace(randomFiles(PACK_MIN_OBJECTS + 400, 3000, 11))
  await snapshotWorkspace({ dir })
  const [name] = readdirSync(store.packs.dir).filter((n) => n.endsWith('.idx'))
  const indexFile = join(store.packs.dir, name!)
  const file = which === 'index' ? indexFile : LocalPacks.packFile(store.packs.dir, (JSON.parse(readFileSync(indexFile, 'utf8')) as PackIndex).pack)
  const bytes = readFileSync(file)
  rmSync(file)
  replace(file, bytes)
  return { dir, layout: tempDir('layout') }
}

/** A copy of `bytes` outside the store, readable by `nobody` too, and a symlink to it at `file`. */
const linkedOut = (file: string, bytes: Buffer) => {
  const outside = tempDir('outside')
  writeFileSync(join(outside, 'copy'), bytes)
  giveToNobody(outside)
  symlinkSync(join(outside, 'copy'), file)
}

describe.each(users)('a push from a store whose pack or index file is not a regular file of it (as %s)', (user) => {
  // a separate process for root too: a push opening a FIFO would block the process it runs in
  const push = ({ dir, layout }: { dir: string; layout: string }) => {
    const args = ['push', 'HEAD', `file://${layout}:v1`]
    if (user === 'root') return runCli(args, { cwd: dir })
    giveToNobody(dir)
    giveToNobody(layout)
    return fpAsNobody(dir, ...args)
  }
  /** The push exits 5 naming why, and tags nothing. */
  const refused = async (workspace: { dir: string; layout: string }, why: RegExp) => {
    const pushed = await push(workspace)
    expect(pushed.code, pushed.stderr).toBe(5)
    expect(pushed.stderr).toMatch(why)
    const tags = join(workspace.layout, 'index.json')
    expect(existsSync(tags) ? readFileSync(tags, 'utf8') : '').not.toMatch(/"v1"/)
  }

  it('refuses a pack that is a FIFO (exit 5) instead of waiting for a writer', async () => {
    await refused(await replacedWorkspace('pack', (file) => execFileSync('mkfifo', [file])), /not a regular file/)
  })

  it('refuses a pack that is a symlink, even to a copy of the pack itself (exit 5): nothing is read out of the store', async () => {
    await refused(await replacedWorkspace('pack', linkedOut), /symlink/)
  })

  it('refuses a pack that is a directory (exit 5, not 6)', async () => {
    await refused(await replacedWorkspace('pack', (file) => mkdirSync(file)), /not a regular file/)
  })

  it('refuses an index that is a FIFO, or a symlink to a copy of itself (exit 5)', async () => {
    await refused(await replacedWorkspace('index', (file) => execFileSync('mkfifo', [file])), /not a regular file/)
    await refused(await replacedWorkspace('index', linkedOut), /not a regular file/)
  })
})
