import { afterAll, describe, expect, it } from 'vitest'
import { machineCli } from '../helpers/machineCli.js'
import { MACHINE_TIMEOUT, killAllMachines, pollFor, processAlive, qemuLaunchersNaming } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/** `--ttl`: a machine's launcher kills it when its time is up, with no forkpoint process running; `machine ls` then removes it. */
let dir: string | undefined

const { fp, fpJson } = machineCli(() => dir!)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

interface Machine {
  id: string
  pid: number
  running: boolean
  expiresAt: string | null
}

describe('forkpoint machine start --ttl', () => {
  it('a machine started with --ttl 2s is killed with no CLI running, and machine ls then shows it no more', { timeout: MACHINE_TIMEOUT }, async () => {
    dir = tempDir('machine-ttl')
    expect((await fp('init')).code).toBe(0)
    const image = await sharedMachineImage(dir, 'busybox')
    expect((await fp('machine', 'start', image, '--ttl', 'soon')).code).toBe(2)
    const m = await fpJson<Machine>('machine', 'start', image, '--ttl', '2s')
    expect(m.expiresAt).toEqual(expect.any(String))
    expect(m.running).toBe(true)
    // no forkpoint process runs from here on: only the machine's launcher can end it
    await pollFor('the machine past its ttl to be killed', () => (processAlive(m.pid) ? undefined : true), MACHINE_TIMEOUT / 2)
    await pollFor('its launcher to exit', () => (qemuLaunchersNaming(m.id).length === 0 ? true : undefined), MACHINE_TIMEOUT / 2)
    const { machines } = await fpJson<{ machines: Machine[] }>('machine', 'ls')
    expect(machines).toEqual([])
    expect((await fp('machine', 'exec', m.id, 'true')).code).toBe(2) // removed: no such machine
  })

  it("fork --ttl: a child with 2s goes while its parent runs on; machine ls shows a longer one's time left", { timeout: MACHINE_TIMEOUT }, async () => {
    dir = tempDir('machine-ttl-fork')
    expect((await fp('init')).code).toBe(0)
    const image = await sharedMachineImage(dir, 'busybox')
    const parent = await fpJson<Machine>('machine', 'start', image)
    const snapshot = (await fpJson<{ image: string }>('machine', 'snapshot', parent.id)).image
    const [short] = (await fpJson<{ machines: Machine[] }>('machine', 'fork', snapshot, '--ttl', '2s')).machines
    const [long] = (await fpJson<{ machines: Machine[] }>('machine', 'fork', snapshot, '--ttl', '1h')).machines
    expect((await fp('machine', 'ls')).stdout).toMatch(new RegExp(`${long!.id}\\t.*\\t(59|60)m left`))
    await pollFor('the child past its ttl to be killed', () => (processAlive(short!.pid) ? undefined : true), MACHINE_TIMEOUT / 2)
    const { machines } = await fpJson<{ machines: Machine[] }>('machine', 'ls')
    expect(machines.map((m) => [m.id, m.running])).toEqual(
      expect.arrayContaining([
        [parent.id, true],
        [long!.id, true],
      ]),
    )
    expect(machines.map((m) => m.id)).not.toContain(short!.id)
  })
})
