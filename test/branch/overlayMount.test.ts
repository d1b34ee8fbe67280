import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { BackendUnavailableError } from '../../src/errors/index.js'
import { mountShared } from '../../src/branch/mount/overlayMount.js'
import { sharedHolder } from '../../src/sandbox/namespaceHolder.js'
import { tempDir } from '../helpers/tmp.js'

const mountedIn = (pid: number, target: string) =>
  readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === target)

it('leaves nothing mounted when one of the overlays of a branch cannot be mounted', async () => {
  const dir = tempDir('overlay')
  for (const d of ['lower', 'lower2', 'base', 'mnt', 'upper', 'work']) mkdirSync(join(dir, d))
  const specs = [
    { target: join(dir, 'base'), lower: [join(dir, 'lower'), join(dir, 'lower2')] },
    { target: join(dir, 'mnt'), lower: [join(dir, 'lower')], upper: { upper: join(dir, 'missing-upper'), work: join(dir, 'work') } },
  ]
  await expect(mountShared(specs)).rejects.toBeInstanceOf(BackendUnavailableError)
  const holder = await sharedHolder()
  expect(mountedIn(holder.id.pid, join(dir, 'base'))).toBe(false)
})
