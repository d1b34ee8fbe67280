import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compress, decompress } from 'zstd-napi'
import { snapshotWorkspace } from '../../src/index.js'
import { type PackIndex, packIndexBytes } from '../../src/store/PackIndex.js'
import { LocalPacks } from '../../src/store/LocalPacks.js'
import { PACK_MIN_OBJECTS } from '../../src/world/scan/scanWorkspace.js'
import { fpAs, giveToNobody } from '../helpers/privilegedModes.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { randomFiles } from '../registry/fixtures.js'

/**
 * A workspace's own store is data from elsewhere too (a cloned repository may hold a
 * `.forkpoint/`): a push sends the frames its packs hold as they are only when each is one
 * zstd frame decompressing to exactly the objects its index names, each matching its digest.
 */
const MARKER = Buffer.from('bytes-smuggled-after-an-honest-frame')
const users = process.getuid?.() === 0 ? (['root', 'nobody'] as const) : (['root'] as const)

/** A workspace snapshotted cold (its store holds one pack, file contents first), frame 0 of that pack changed by `tamper`. */
async function tamperedWorkspace(tamper: (compressed: Buffer) => Buffer): Promise<{ dir: string; layout: string }> {
  const { dir, store } = await storeWorkspace(randomFiles(PACK_MIN_OBJECTS + 400, 3000, 11))
  await snapshotWorkspace({ dir })
  const [name] = readdirSync(store.packs.dir).filter((n) => n.endsWith('.idx'))
  const indexFile = join(store.packs.dir, name!)
  const index = JSON.parse(readFileSync(indexFile, 'utf8')) as PackIndex
  const packFile = LocalPacks.packFile(store.packs.dir, index.pack)
  const bytes = readFileSync(packFile)
  const [length] = index.frames[0]!
  const frame = tamper(bytes.subarray(0, length))
  writeFileSync(packFile, Buffer.concat([frame, bytes.subarray(length)]))
  index.frames[0]![0] = frame.length
  index.packSize += frame.length - length
  writeFileSync(indexFile, packIndexBytes(index))
  const layout = tempDir('layout')
  return { dir, layout }
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

  it('does not carry a skippable frame appended to an honest one: the frame is built anew from its objects', async () => {
    const skippable = Buffer.alloc(8)
    skippable.writeUInt32LE(0x184d2a50, 0)
    skippable.writeUInt32LE(MARKER.length, 4)
    const workspace = await tamperedWorkspace((frame) => Buffer.concat([frame, skippable, MARKER]))
    const pushed = await push(workspace)
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(layoutBytes(workspace.layout).length).toBeGreaterThan(0)
    expect(layoutBytes(workspace.layout).includes(MARKER)).toBe(false)
  })

  it('refuses a frame that decompresses as its index says but to other bytes than its digests name (exit 5), and tags nothing', async () => {
    const workspace = await tamperedWorkspace((frame) => {
      const raw = Buffer.from(decompress(frame))
      raw.set(MARKER, 100) // inside the frame's first file
      return Buffer.from(compress(raw, { compressionLevel: 1, checksumFlag: true }))
    })
    const pushed = await push(workspace)
    expect(pushed.code, pushed.stdout).toBe(5)
    expect(pushed.stderr).toMatch(/sha256:[0-9a-f]{64}/)
    const tags = join(workspace.layout, 'index.json')
    expect(existsSync(tags) ? readFileSync(tags, 'utf8') : '').not.toMatch(/"v1"/)
    expect(layoutBytes(workspace.layout).includes(MARKER)).toBe(false)
  })
})
