import { generateKeyPairSync } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fp, fpJson, runCli } from '../helpers/cli.js'
import { type RegistryServer, startRegistry } from '../helpers/registryServer.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { remotePacks, treeListing } from './fixtures.js'

let registry: RegistryServer
let authRegistry: RegistryServer

beforeAll(async () => {
  ;[registry, authRegistry] = await Promise.all([
    startRegistry({ dir: tempDir('registry') }),
    startRegistry({ dir: tempDir('registry-auth'), auth: { username: 'ci', password: 'pw' } }),
  ])
})
afterAll(async () => {
  await Promise.all([registry?.stop(), authRegistry?.stop()])
})

async function snapshotted(files: Record<string, string>): Promise<string> {
  const dir = await makeWorkspace(files)
  expect((await fp(dir, 'init')).code).toBe(0)
  expect((await fp(dir, 'snapshot', '-m', 'first')).code).toBe(0)
  return dir
}

describe('forkpoint push / pull / clone / pack / unpack', () => {
  it('pushes to a registry and clones into a second store and directory', async () => {
    const dir = await snapshotted({ 'a.txt': 'one', 'src/main.ts': 'export {}\n' })
    const remote = `oci://${registry.host}/demo/agent`
    const push = await fpJson<{ tag: string; sentObjects: number; objects: number }>(dir, 'push', 'HEAD', remote)
    expect(push.code).toBe(0)
    expect(push.json).toMatchObject({ schemaVersion: 1, tag: 'main' })
    expect(push.json.sentObjects).toBe(push.json.objects)

    const other = tempDir('other')
    const into = join(tempDir('clone'), 'agent')
    const clone = await fpJson<{ files: number; id: string }>(other, '--store', join(other, 'store'), 'clone', `${remote}:main`, '--into', into)
    expect(clone.code).toBe(0)
    expect(clone.json.files).toBe(2)
    expect(await treeListing(into)).toEqual(await treeListing(dir))

    const again = await fpJson<{ fetchedObjects: number }>(other, '--store', join(other, 'store'), 'pull', `${remote}:main`)
    expect(again.json.fetchedObjects).toBe(0)
  })

  it('exits 5 on a tampered blob, 2 on missing credentials, 5 on a bad signature', async () => {
    const dir = await snapshotted({ 'a.txt': 'to be tampered with' })
    const remote = `oci://${registry.host}/demo/tampered:v1`
    expect((await fp(dir, 'push', 'HEAD', remote)).code).toBe(0)
    const [pack] = await remotePacks(remote)
    const data = await fs.readFile(registry.blobDataPath(pack!))
    data[data.length - 3] = data[data.length - 3]! ^ 0x40
    await fs.writeFile(registry.blobDataPath(pack!), data)
    const other = tempDir('other')
    const pulled = await fp(other, '--store', join(other, 'store'), 'clone', remote, '--into', join(other, 'out'))
    expect(pulled.code).toBe(5)
    expect(pulled.stderr).toMatch(/^forkpoint: pack sha256:\w+ in oci:\/\/\S+ does not decompress/)
    await expect(fs.stat(join(other, 'out'))).rejects.toThrow()

    const denied = await fp(dir, 'push', 'HEAD', `oci://${authRegistry.host}/demo/agent:v1`)
    expect(denied.code).toBe(2)
    expect(denied.stderr).toContain('requires credentials')
    const allowed = await runCli(['push', 'HEAD', `oci://${authRegistry.host}/demo/agent:v1`], {
      cwd: dir,
      env: { FORKPOINT_REGISTRY_USERNAME: 'ci', FORKPOINT_REGISTRY_PASSWORD: 'pw' },
    })
    expect(allowed.code).toBe(0)

    const keyDir = tempDir('keys')
    const { privateKey, publicKey } = generateKeyPairSync('ed25519')
    await fs.writeFile(join(keyDir, 'signing.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }))
    await fs.writeFile(join(keyDir, 'verify.pem'), generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }))
    await fs.writeFile(join(keyDir, 'right.pem'), publicKey.export({ type: 'spki', format: 'pem' }))
    const layout = `file://${tempDir('layout')}:v1`
    const signed = await runCli(['push', 'HEAD', layout, '--sign'], { cwd: dir, env: { FORKPOINT_SIGNING_KEY: join(keyDir, 'signing.pem') } })
    expect(signed.code).toBe(0)
    expect(signed.stdout).toContain('(signed)')
    expect((await fp(dir, 'push', 'HEAD', layout, '--sign')).code).toBe(2) // no key configured
    expect((await fp(other, '--store', join(other, 's2'), 'clone', layout, '--into', join(other, 'o2'), '--verify-key', join(keyDir, 'verify.pem'))).code).toBe(5)
    expect((await fp(other, '--store', join(other, 's3'), 'clone', layout, '--into', join(other, 'o3'), '--verify-key', join(keyDir, 'right.pem'))).code).toBe(0)
  })

  it('packs to one file and unpacks it elsewhere', async () => {
    const dir = await snapshotted({ 'a.txt': 'packed', 'b/c.txt': 'deeper' })
    const file = join(tempDir('packs'), 'image.fpk')
    const pack = await fpJson<{ objects: number }>(dir, 'pack', 'HEAD', '-o', file)
    expect(pack.code).toBe(0)
    const other = await makeWorkspace({})
    expect((await fp(other, 'init')).code).toBe(0)
    const unpack = await fpJson<{ id: string; tag: string; added: number }>(other, 'unpack', file, '--tag', 'shipped')
    expect(unpack.json).toMatchObject({ tag: 'shipped', added: pack.json.objects })
    const out = join(tempDir('out'), 'tree')
    expect((await fp(other, 'checkout', 'shipped', '--into', out)).code).toBe(0)
    expect(await treeListing(out)).toEqual(await treeListing(dir))
    await fs.writeFile(file, 'garbage')
    expect((await fp(other, 'unpack', file)).code).toBe(5)
  })
})
