import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { machineCli } from '../helpers/machineCli.js'
import { MACHINE_TIMEOUT, killAllMachines } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/** `machine cp` through the CLI, both ways, into one busybox machine (started detached, killed after). */
let dir: string | undefined
let machine: string

const { fp, fpJson } = machineCli(() => dir!)

beforeAll(async () => {
  dir = tempDir('machine-cp')
  expect((await fp('init')).code).toBe(0)
  const image = await sharedMachineImage(dir, 'busybox')
  machine = (await fpJson<{ id: string }>('machine', 'start', image)).id
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

describe('forkpoint machine cp', { timeout: MACHINE_TIMEOUT }, () => {
  it('copies a binary file in and back out, bytes exact, with its permission bits', async () => {
    // every byte value, then more than one chunk each way (48 KiB in, 1 MiB out)
    const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(1_300_000)])
    const source = join(dir!, 'blob.bin')
    writeFileSync(source, bytes, { mode: 0o751 })
    const copiedIn = await fpJson<{ path: string; bytes: number; mode: number }>('machine', 'cp', source, `${machine}:/data`)
    expect(copiedIn).toMatchObject({ path: '/data/blob.bin', bytes: bytes.length, mode: 0o751 })
    const inGuest = await fp('machine', 'exec', machine, 'stat -c "%s %a" /data/blob.bin && ls -a /data')
    expect(inGuest.stdout).toMatch(new RegExp(`^${bytes.length} 751\\n`))
    expect(inGuest.stdout).not.toMatch(/forkpoint-/) // no temp file left beside it

    const back = join(dir!, 'back.bin')
    const copiedOut = await fpJson<{ path: string; bytes: number; mode: number }>('machine', 'cp', `${machine}:/data/blob.bin`, back)
    expect(copiedOut).toMatchObject({ path: back, bytes: bytes.length, mode: 0o751 })
    expect(readFileSync(back).equals(bytes)).toBe(true)
    expect(statSync(back).mode & 0o7777).toBe(0o751)
  })

  it('refuses a guest path that is missing or a folder (exit 2), and writes nothing', async () => {
    const target = join(dir!, 'never')
    const missing = await fp('machine', 'cp', `${machine}:/data/no-such-file`, target)
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/no such file in the guest/)])
    const folder = await fp('machine', 'cp', `${machine}:/data`, target)
    expect([folder.code, folder.stderr]).toEqual([2, expect.stringMatching(/is a directory in the guest/)])
    expect(existsSync(target)).toBe(false)
  })

  it('refuses a host folder as the source (exit 2), and a copy with no side in a machine', async () => {
    const folder = join(dir!, 'a-folder')
    mkdirSync(folder)
    const r = await fp('machine', 'cp', folder, `${machine}:/data/x`)
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/is a directory: machine cp copies one regular file/)])
    const neither = await fp('machine', 'cp', folder, join(dir!, 'elsewhere'))
    expect(neither.code).toBe(2)
  })
})
