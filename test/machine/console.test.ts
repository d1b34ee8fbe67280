import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI } from '../helpers/cli.js'
import { machineCli } from '../helpers/machineCli.js'
import { KERNEL_CACHE, MACHINE_TIMEOUT, killAllMachines, pollFor } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/** `machine console`: the serial console's shell, driven through a pipe (no terminal), left with the detach key. */
let dir: string | undefined
const { fp, fpJson } = machineCli(() => dir!)

beforeAll(() => {
  dir = tempDir('machine-console')
})

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

/** `forkpoint machine console ID` with stdin a pipe: what it printed once `marker` came, and its exit code after Ctrl-]. */
async function consoleRound(machine: string, command: string, marker: string): Promise<{ output: string; code: number | null }> {
  const child = spawn(CLI, ['machine', 'console', machine], { cwd: dir, env: { PATH: process.env['PATH'], HOME: process.env['HOME'], XDG_CACHE_HOME: KERNEL_CACHE } })
  let output = ''
  child.stdout.on('data', (b: Buffer) => (output += b.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
  child.stdin.write(`${command}\n`)
  await pollFor(`${marker} on the console`, () => (output.includes(marker) ? true : undefined))
  child.stdin.write('\x1d')
  return { output, code: await exited }
}

describe('forkpoint machine console', { timeout: MACHINE_TIMEOUT }, () => {
  it("runs what is typed in the guest's console shell, detaches on Ctrl-], and a forked child's console is its own", async () => {
    expect((await fp('init')).code).toBe(0)
    const image = await sharedMachineImage(dir!, 'busybox')
    const machine = (await fpJson<{ id: string }>('machine', 'start', image, '--memory', '128')).id

    const first = await consoleRound(machine, 'echo marker-$((40+2)) > /tmp/typed; cat /tmp/typed', 'marker-42')
    expect(first.code).toBe(0)
    expect((await fp('machine', 'exec', machine, 'cat /tmp/typed')).stdout).toBe('marker-42\n') // it ran in the guest, not on the host

    const snapshot = (await fp('machine', 'snapshot', machine)).stdout.trim()
    const { machines } = await fpJson<{ machines: Array<{ id: string }> }>('machine', 'fork', snapshot)
    const child = await consoleRound(machines[0]!.id, 'echo child-$(cat /tmp/typed)', 'child-marker-42')
    expect(child.code).toBe(0)
    expect((await fp('machine', 'console', 'm00000000')).code).toBe(2)
  })
})
