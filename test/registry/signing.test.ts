import { generateKeyPairSync } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { SignatureError, pullImage, pushImage } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, makeImage, storeState } from './fixtures.js'

const pem = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString() }
}

describe('signed images', () => {
  it('pull --verify-key accepts an image signed with the matching key', async () => {
    const keys = pem()
    const image = await makeImage({ 'a.txt': 'signed' })
    const remote = `file://${tempDir('layout')}:v1`
    expect((await pushImage({ store: image.store, id: image.id, remote, signingKey: keys.privateKey })).signed).toBe(true)
    const pulled = await pullImage({ store: await emptyStore(), remote, verifyKey: keys.publicKey })
    expect(pulled).toMatchObject({ id: image.id, verified: true })
  })

  it('refuses an unsigned image and one signed with another key (exit 5, store untouched)', async () => {
    const keys = pem()
    const image = await makeImage({ 'a.txt': 'maybe signed' })
    const unsigned = `file://${tempDir('layout')}:v1`
    await pushImage({ store: image.store, id: image.id, remote: unsigned })
    const signedByOther = `file://${tempDir('layout')}:v1`
    await pushImage({ store: image.store, id: image.id, remote: signedByOther, signingKey: pem().privateKey })
    for (const [remote, message] of [
      [unsigned, /is not signed/],
      [signedByOther, /not signed by the given key/],
    ] as const) {
      const store = await emptyStore()
      const before = await storeState(store)
      const error = await pullImage({ store, remote, verifyKey: keys.publicKey }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(SignatureError)
      expect((error as SignatureError).exitCode).toBe(5)
      expect((error as Error).message).toMatch(message)
      expect(await storeState(store)).toEqual(before)
    }
  })
})
