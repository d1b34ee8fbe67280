import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fetchGuestKernel } from '../../src/machine/image/kernelPackage.js'
import { CLI, type CliResult } from '../helpers/cli.js'
import { KERNEL_CACHE, MACHINE_TIMEOUT, heartbeatDaemon, killAllMachines, pollFor, processAlive } from '../helpers/machines.js'
import { tempDir } from '../helpers/tmp.js'

/**
 * Most users are not root: as root, run boot, exec, snapshot and fork through the CLI as
 * `nobody` (setpriv), in a store nobody owns, with the suite's kernel cache (world-writable).
 * TCG needs no device and QEMU no capability; the network namespace comes with a user
 * namespace of the caller's.
 */
const root = process.getuid?.() === 0
const NOBODY = 65534
let dir: string | undefined
let home: string

beforeAll(async () => {
  if (!root) return
  await fetchGuestKernel() // into the suite's cache, as root, before nobody needs it (a build only looks it up)
  dir = tempDir('machine-nobody')
  home = tempDir('machine-nobody-home')
  for (const d of [dir, home]) chownSync(d, NOBODY, NOBODY)
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

function asNobody(...args: string[]): Promise<CliResult> {
  const argv = [
    '--reuid=nobody',
    '--regid=nogroup',
    '--clear-groups',
    'env',
    `HOME=${home}`,
    `PATH=${process.env['PATH']}`,
    'NO_COLOR=1',
    `XDG_CACHE_HOME=${KERNEL_CACHE}`,
    CLI,
    ...args,
  ]
  return new Promise((resolve, reject) => {
    const child = spawn('setpriv', argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
    let [stdout, stderr] = ['', '']
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()))
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

async function ok(...args: string[]): Promise<string> {
  const r = await asNobody(...args)
  if (r.code !== 0) throw new Error(`forkpoint ${args.join(' ')} as nobody exited ${r.code}:\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])

describe.runIf(root)('machines for a user who is not root (nobody)', () => {
  it('boots, runs commands, snapshots and forks children that continue from the snapshot', { timeout: MACHINE_TIMEOUT * 2 }, async () => {
    await ok('init')
    const image = (JSON.parse(await ok('machine', 'build', 'busybox', '--json')) as { image: string }).image
    const parent = JSON.parse(await ok('machine', 'start', image, '--json')) as { id: string; pid: number }
    expect(uidOf(parent.pid)).toBe(NOBODY)
    const secret = randomBytes(8).toString('hex')
    await ok('machine', 'exec', parent.id, heartbeatDaemon(secret))
    await pollFor('the daemon', async () => ((await asNobody('machine', 'exec', parent.id, 'cat /tmp/heartbeat')).stdout === `${secret}\n` ? true : undefined))
    expect(await ok('machine', 'exec', parent.id, 'ls /sys/class/net')).toBe('lo\n')
    const snapshot = (await ok('machine', 'snapshot', parent.id)).trim()
    const { machines: kids } = JSON.parse(await ok('machine', 'fork', snapshot, '-n', '2', '--json')) as { machines: Array<{ id: string; pid: number }> }
    expect(kids).toHaveLength(2)
    const randoms: string[] = []
    for (const kid of kids) {
      expect(uidOf(kid.pid)).toBe(NOBODY)
      randoms.push(await ok('machine', 'exec', kid.id, "head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n'"))
      await ok('machine', 'exec', kid.id, 'rm /tmp/heartbeat')
      const beat = await pollFor('the daemon in a child', async () => (await asNobody('machine', 'exec', kid.id, 'cat /tmp/heartbeat')).stdout || undefined)
      expect(beat).toBe(`${secret}\n`)
    }
    expect(new Set(randoms).size).toBe(2)
    await ok('machine', 'kill', parent.id, ...kids.map((k) => k.id))
    for (const pid of [parent.pid, ...kids.map((k) => k.pid)]) expect(processAlive(pid)).toBe(false)
    expect((JSON.parse(await ok('machine', 'ls', '--json')) as { machines: unknown[] }).machines).toEqual([])
  })

  it('builds a python image (apt, fakeroot, mke2fs as nobody) whose files the guest sees owned by root, and runs it', { timeout: MACHINE_TIMEOUT * 2 }, async () => {
    const image = (JSON.parse(await ok('machine', 'build', 'python', '--json')) as { image: string }).image
    const m = JSON.parse(await ok('machine', 'start', image, '--json')) as { id: string; pid: number }
    expect(uidOf(m.pid)).toBe(NOBODY)
    expect(await ok('machine', 'exec', m.id, 'stat -c %u:%g /usr/bin/python3.11 /etc/passwd; python3 -c "print(6 * 7)"')).toBe('0:0\n0:0\n42\n')
    await ok('machine', 'kill', m.id)
  })
})
