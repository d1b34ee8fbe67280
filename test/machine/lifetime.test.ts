import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killMachine, listMachines } from '../../src/index.js'
import { ROOT } from '../helpers/cli.js'
import { MACHINE_TIMEOUT, execOrHang, killAllMachines, machineWorkspace, pollFor, processAlive } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * A machine the library starts is tied to its caller: however the caller ends (SIGKILL
 * here, no handler runs), its QEMU goes with it. A detached one outlives its caller until
 * killMachine. The caller is a separate node process running the library from source.
 */
let dir: string
let image: string
const callers: ChildProcess[] = []

const BOOT_SCRIPT = `
import { bootMachine } from ${JSON.stringify(join(ROOT, 'src', 'index.ts'))}
const [dir, image, detached] = process.argv.slice(2)
const m = await bootMachine({ dir, image, detached: detached === 'detached' })
process.stdout.write(JSON.stringify({ id: m.id, pid: m.pid }) + '\\n')
setInterval(() => undefined, 60_000) // and wait to be killed
`

beforeAll(async () => {
  dir = await machineWorkspace('machine-lifetime')
  image = await sharedMachineImage(dir, 'busybox')
}, MACHINE_TIMEOUT)

afterAll(async () => {
  for (const c of callers) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

/** A node process (one process: `node --import tsx`, no wrapper) that boots a machine and prints its id and QEMU's pid. */
async function bootInAnotherProcess(mode: 'tied' | 'detached'): Promise<{ caller: ChildProcess; id: string; pid: number }> {
  const script = join(tempDir('machine-caller'), 'boot.mts')
  writeFileSync(script, BOOT_SCRIPT)
  const caller = spawn(process.execPath, ['--import', 'tsx', script, dir, image, mode], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } })
  callers.push(caller)
  let out = ''
  let err = ''
  caller.stderr.on('data', (b: Buffer) => (err += b.toString()))
  const line = await new Promise<string>((resolve, reject) => {
    caller.stdout.on('data', (b: Buffer) => {
      out += b.toString()
      if (out.includes('\n')) resolve(out.split('\n')[0]!)
    })
    caller.on('exit', (code) => reject(new Error(`the caller exited ${code} before booting: ${err}`)))
  })
  const { id, pid } = JSON.parse(line) as { id: string; pid: number }
  return { caller, id, pid }
}

const isQemu = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('qemu-system')

describe("a machine's lifetime", { timeout: MACHINE_TIMEOUT }, () => {
  it('leaves no QEMU behind when its caller is killed with SIGKILL', async () => {
    const { caller, id, pid } = await bootInAnotherProcess('tied')
    expect(processAlive(pid)).toBe(true)
    expect(isQemu(pid)).toBe(true)
    expect((await execOrHang({ dir, machine: id, command: 'echo up' })).stdout).toBe('up\n')
    caller.kill('SIGKILL')
    await pollFor(`QEMU ${pid} to go with its caller`, () => (processAlive(pid) ? undefined : true))
    expect((await listMachines({ dir })).find((m) => m.id === id)).toMatchObject({ running: false })
    await killMachine({ dir, machine: id }) // the record of a machine gone is removed
    expect((await listMachines({ dir })).map((m) => m.id)).not.toContain(id)
  })

  it('keeps a detached machine after its caller is killed, until killMachine', async () => {
    const { caller, id, pid } = await bootInAnotherProcess('detached')
    caller.kill('SIGKILL')
    await pollFor('the caller to go', () => (caller.signalCode === null ? undefined : true))
    expect(processAlive(pid)).toBe(true)
    expect((await execOrHang({ dir, machine: id, command: 'echo still' })).stdout).toBe('still\n')
    expect((await listMachines({ dir })).find((m) => m.id === id)).toMatchObject({ running: true, detached: true })
    await killMachine({ dir, machine: id })
    expect(processAlive(pid)).toBe(false)
    expect(await listMachines({ dir })).toEqual([])
  })
})
