import { describe, expect, it } from 'vitest'
import { UsageError, snapshotWorkspace } from '../../src/index.js'
import { showSpec } from '../../src/image/showSpec.js'
import { type ShownFile, fileContent } from '../../src/world/diff/showPath.js'
import { storeWorkspace } from '../helpers/workspace.js'

async function bytesOf(dir: string, file: ShownFile): Promise<Buffer> {
  const pieces: Buffer[] = []
  for await (const piece of fileContent({ dir, file })) pieces.push(piece)
  return Buffer.concat(pieces)
}

describe('show ID:PATH', () => {
  it("gives a file's text and bytes, a symlink's target and a directory's names from an image", async () => {
    const binary = Buffer.from([0, 1, 2, 255])
    const { dir } = await storeWorkspace({ 'index.js': 'console.log(1)\n', 'src/data.bin': binary, 'src/link': { symlink: '../index.js' } })
    const snap = await snapshotWorkspace({ dir })
    expect(await showSpec({ dir, id: 'HEAD:index.js' })).toMatchObject({ kind: 'file', id: snap.id, path: 'index.js', text: 'console.log(1)\n', chunked: false })
    const data = (await showSpec({ dir, id: `${snap.id}:src/data.bin` })) as ShownFile
    expect(data.text).toBeNull()
    expect(await bytesOf(dir, data)).toEqual(binary)
    expect(await showSpec({ dir, id: 'HEAD:src/link' })).toMatchObject({ kind: 'symlink', target: '../index.js', text: '../index.js' })
    const listing = await showSpec({ dir, id: 'HEAD:src' })
    expect(listing).toMatchObject({
      kind: 'dir',
      path: 'src',
      total: 2,
      entries: [
        { name: 'data.bin', type: 'file' },
        { name: 'link', type: 'symlink' },
      ],
    })
    expect(await showSpec({ dir, id: 'HEAD:' })).toMatchObject({ kind: 'dir', path: '', entries: expect.arrayContaining([expect.objectContaining({ name: 'src', type: 'dir' })]) })
  })

  it('refuses a path the image does not have (exit 2)', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    await snapshotWorkspace({ dir })
    const err = await showSpec({ dir, id: 'HEAD:nope.txt' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as UsageError).exitCode).toBe(2)
  })

  it('shows a blob by its id with its text, not only its size', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'hello\n' })
    await snapshotWorkspace({ dir })
    const file = (await showSpec({ dir, id: 'HEAD:a.txt' })) as ShownFile
    expect(await showSpec({ dir, id: file.content! })).toMatchObject({ kind: 'blob', size: 6, text: 'hello\n' })
  })
})
