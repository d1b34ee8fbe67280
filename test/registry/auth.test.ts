import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RegistryAuthError, pullImage, pushImage } from '../../src/index.js'
import { findCredentials } from '../../src/registry/transport/findCredentials.js'
import { type RegistryServer, startRegistry } from '../helpers/registryServer.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, makeImage } from './fixtures.js'

const user = { username: 'alice', password: 's3cret-pass' }
let registry: RegistryServer

beforeAll(async () => {
  registry = await startRegistry({ dir: tempDir('registry-auth'), auth: user })
})
afterAll(async () => {
  await registry?.stop()
})

describe('registry authentication (htpasswd)', () => {
  it('pushes and pulls with credentials', async () => {
    const image = await makeImage({ 'a.txt': 'private' })
    const remote = `oci://${registry.host}/private/agent:v1`
    expect((await pushImage({ store: image.store, id: image.id, remote, credentials: user })).sentObjects).toBe(3)
    expect((await pullImage({ store: await emptyStore(), remote, credentials: user })).id).toBe(image.id)
  })

  it('fails clearly without credentials and with wrong ones, leaving nothing behind', async () => {
    const image = await makeImage({ 'a.txt': 'private' })
    const remote = `oci://${registry.host}/private/other:v1`
    const anonymous = await pushImage({ store: image.store, id: image.id, remote, credentials: null }).catch((e: unknown) => e)
    expect(anonymous).toBeInstanceOf(RegistryAuthError)
    expect((anonymous as RegistryAuthError).message).toMatch(/requires credentials.*docker login|FORKPOINT_REGISTRY_USERNAME/)
    expect((anonymous as RegistryAuthError).exitCode).toBe(2)
    const wrong = await pullImage({ store: await emptyStore(), remote, credentials: { username: 'alice', password: 'nope' } }).catch((e: unknown) => e)
    expect(wrong).toBeInstanceOf(RegistryAuthError)
    expect((wrong as Error).message).toContain('refused the credentials of user alice')
  })

  it('finds credentials in the environment and in Docker config.json', async () => {
    const dockerConfig = tempDir('docker')
    await fs.writeFile(join(dockerConfig, 'config.json'), JSON.stringify({ auths: { [registry.host]: { auth: Buffer.from('alice:s3cret-pass').toString('base64') } } }))
    expect(await findCredentials(registry.host, { DOCKER_CONFIG: dockerConfig })).toEqual(user)
    expect(await findCredentials('elsewhere:5000', { DOCKER_CONFIG: dockerConfig })).toBeNull()
    expect(await findCredentials('any', { FORKPOINT_REGISTRY_USERNAME: 'bob', FORKPOINT_REGISTRY_PASSWORD: 'pw', DOCKER_CONFIG: dockerConfig })).toEqual({
      username: 'bob',
      password: 'pw',
    })

    const image = await makeImage({ 'a.txt': 'via docker config' })
    const saved = process.env['DOCKER_CONFIG']
    process.env['DOCKER_CONFIG'] = dockerConfig
    try {
      const pushed = await pushImage({ store: image.store, id: image.id, remote: `oci://${registry.host}/private/config:v1` })
      expect(pushed.sentObjects).toBe(3)
    } finally {
      if (saved === undefined) delete process.env['DOCKER_CONFIG']
      else process.env['DOCKER_CONFIG'] = saved
    }
  })
})
