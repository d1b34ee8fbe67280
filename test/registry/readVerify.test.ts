import { existsSync, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DigestMismatchError, packImage, pushImage } from '../../src/index.js'
import { sha256 } from '../../src/objects/digest.js'
import { openTransport } from '../../src/registry/transport/openTransport.js'
import { parseRemote } from '../../src/registry/transport/parseRemote.js'
import { fp } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { makeImage } from './fixtures.js'
import { TRANSPORTS, useRemotes } from './remotes.js'

const remotes = useRemotes()
const ORIGINAL = 'the bytes that were snapshotted'
const SAME_LENGTH = 'THE BYTES THAT WERE SNAPSHOTTED'

/** An image one of whose objects was changed on disk afterwards, keeping its length. */
async function damagedImage() {
  const image = await makeImage({ 'victim.txt': ORIGINAL, 'other.txt': 'fine' })
  await fs.writeFile(image.store.objectPath(sha256(ORIGINAL)), SAME_LENGTH)
  return image
}

async function expectCorruptNamed(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e as Error,
  )
  expect(error).toBeInstanceOf(DigestMismatchError)
  expect(error?.message).toContain(sha256(ORIGINAL))
}

describe('reads for use verify what they read', () => {
  it('pack refuses an object changed on disk and writes no pack', async () => {
    const image = await damagedImage()
    const output = join(tempDir('pack'), 'out.fpk')
    await expectCorruptNamed(packImage({ store: image.store, id: image.id, output }))
    expect(existsSync(output)).toBe(false)
  })

  it.each(TRANSPORTS)('push to %s refuses an object changed on disk and the remote never gets it', async (kind) => {
    const image = await damagedImage()
    const remote = remotes.remote(kind)
    await expectCorruptNamed(pushImage({ store: image.store, id: image.id, remote, credentials: null }))
    const transport = await openTransport(parseRemote(remote), { credentials: null })
    expect(await transport.statBlob(sha256(ORIGINAL))).toBeNull()
    expect(await transport.statBlob(sha256(SAME_LENGTH))).toBeNull()
    expect(await transport.listTags()).toEqual([])
  })

  it('forkpoint pack and push exit 5 naming the object', async () => {
    const dir = await makeWorkspace({ 'victim.txt': ORIGINAL })
    expect((await fp(dir, 'init')).code).toBe(0)
    expect((await fp(dir, 'snapshot', '-m', 'one')).code).toBe(0)
    const hex = sha256(ORIGINAL).slice(7)
    await fs.writeFile(join(dir, '.forkpoint', 'objects', 'sha256', hex.slice(0, 2), hex.slice(2)), SAME_LENGTH)
    for (const args of [
      ['pack', 'HEAD', '-o', join(tempDir('pack'), 'x.fpk')],
      ['push', 'HEAD', remotes.remote('oci')],
    ]) {
      const r = await fp(dir, ...args)
      expect(r.code, r.stderr).toBe(5)
      expect(r.stderr).toContain(`object ${sha256(ORIGINAL)}`)
      expect(r.stderr).toContain('corrupt')
    }
  })
})
