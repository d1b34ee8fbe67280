import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MachineInfo, bootMachine, buildMachineImage, forkMachine, killMachine, showObject, snapshotMachine } from '../../src/index.js'
import { downloadPackages, packageClosure } from '../../src/machine/image/debianRootfs.js'
import { type CliResult, runCliInProcess } from '../helpers/cli.js'
import { KERNEL_CACHE, MACHINE_TIMEOUT, execOrHang, killAllMachines, machineWorkspace, pollFor, shq } from '../helpers/machines.js'

/**
 * The python and node recipes: a Debian root filesystem run through qemu-guest-agent. One
 * python image and one machine booted from it are shared by the tests of this file; a
 * warm Python process (state in its memory alone) is the point of forking one.
 */
let dir: string
let python: string
let parent: MachineInfo
const env = { XDG_CACHE_HOME: KERNEL_CACHE }

async function sh(machine: string, command: string): Promise<string> {
  const r = await execOrHang({ dir, machine, command })
  if (r.exitCode !== 0) throw new Error(`${command} in ${machine}: exit ${r.exitCode}: ${r.stderr}`)
  return r.stdout
}

/** A machine image's root filesystem as the store holds it. */
async function rootfsOf(id: string): Promise<{ packages: string[]; diskBytes: number }> {
  const shown = await showObject({ dir, id })
  if (!('object' in shown)) throw new Error(`${id} is not a machine image`)
  return (shown.object as unknown as { rootfs: { packages: string[]; diskBytes: number } }).rootfs
}

beforeAll(async () => {
  dir = await machineWorkspace('machine-rootfs')
  python = (await buildMachineImage({ dir, recipe: 'python' })).image
  parent = await bootMachine({ dir, image: python, diskMiB: 600 })
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

describe('the python recipe', () => {
  it('is an image whose root filesystem holds python3 and qemu-guest-agent from Debian, and no perl', { timeout: MACHINE_TIMEOUT }, async () => {
    const rootfs = await rootfsOf(python)
    const names = rootfs.packages.map((p) => p.split('=')[0])
    expect(names).toEqual(expect.arrayContaining(['python3', 'qemu-guest-agent', 'libc6', 'busybox-static', 'dash']))
    expect(names.filter((n) => n!.startsWith('perl'))).toEqual([])
    expect(rootfs.diskBytes).toBeGreaterThan(50 * 2 ** 20)
  })

  it('runs commands through qemu-guest-agent: output, errors and exit codes, as root, with no network', { timeout: MACHINE_TIMEOUT }, async () => {
    expect(await sh(parent.id, 'python3 -c "import json, sqlite3; print(json.dumps({\\"ok\\": sqlite3.sqlite_version > \\"3\\"}))"')).toBe('{"ok": true}\n')
    const failing = await execOrHang({ dir, machine: parent.id, command: 'echo out; echo err >&2; exit 7' })
    expect(failing).toEqual({ exitCode: 7, stdout: 'out\n', stderr: 'err\n' })
    expect(await sh(parent.id, 'id -u; ls /sys/class/net')).toBe('0\nlo\n')
    expect((await execOrHang({ dir, machine: parent.id, command: 'cat' })).stdout).toBe('') // stdin is empty, not the console
    const big = await sh(parent.id, 'head -c 3000000 /dev/zero | base64 -w 0 | wc -c')
    expect(Number(big)).toBe(4_000_000)
  })

  it('grows the root filesystem to the disk asked for', { timeout: MACHINE_TIMEOUT }, async () => {
    const sizeMiB = Number((await sh(parent.id, "df -m / | awk 'NR==2 {print $2}'")).trim())
    expect(sizeMiB).toBeGreaterThan(500) // the image's own is some 150 MiB; ext4 keeps 7% for itself
    expect(sizeMiB).toBeLessThanOrEqual(600)
  })

  it("refuses a disk smaller than the image's filesystem (exit 2), before QEMU starts", { timeout: MACHINE_TIMEOUT }, async () => {
    const r = await runCliInProcess(['machine', 'start', python, '--disk', '16', '--json'], { cwd: dir, env })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/root filesystem takes \d+ MiB/)
  })

  it('forks children that continue a warm Python process, each with a disk of its own', { timeout: MACHINE_TIMEOUT * 2 }, async () => {
    const secret = randomBytes(8).toString('hex')
    const program = `import os, time\nv = open("/tmp/secret").read(); os.remove("/tmp/secret")\nwhile True:\n    open("/tmp/beat", "w").write(v); time.sleep(0.2)\n`
    await sh(parent.id, `printf %s ${shq(secret)} > /tmp/secret; printf %s ${shq(program)} > /tmp/warm.py; setsid python3 /tmp/warm.py </dev/null >/dev/null 2>&1 &`)
    await pollFor('the python process to hold the secret', async () => ((await sh(parent.id, 'cat /tmp/beat 2>/dev/null; ls /tmp')).startsWith(`${secret}beat`) ? true : undefined))
    await sh(parent.id, 'rm /tmp/warm.py; echo parent > /root/note')
    const snap = await snapshotMachine({ dir, machine: parent.id })
    const kids = await forkMachine({ dir, image: snap.image, n: 2 })
    try {
      for (const kid of kids) {
        await sh(kid.id, 'rm /tmp/beat')
        await pollFor(`child ${kid.id}'s python to write again`, async () => ((await sh(kid.id, 'cat /tmp/beat 2>/dev/null || true')) === secret ? true : undefined))
        expect(await sh(kid.id, 'cat /root/note')).toBe('parent\n')
      }
      await sh(kids[0]!.id, 'echo mine > /root/only-first')
      expect((await execOrHang({ dir, machine: kids[1]!.id, command: 'cat /root/only-first' })).exitCode).not.toBe(0)
      const randoms = await Promise.all(kids.map((k) => sh(k.id, 'head -c 16 /dev/urandom | od -An -tx1')))
      expect(new Set(randoms).size).toBe(2)
    } finally {
      for (const kid of kids) await killMachine({ dir, machine: kid.id })
    }
  })
})

describe('building root filesystem images', () => {
  let withJq: Promise<{ build: CliResult; deb: string; whole: Buffer }> | undefined

  /**
   * `machine build python --package jq`, run once for the two tests that need it (a build takes
   * a minute on a busy host): jq's .deb is put in the cache and cut short first, so the build
   * that adds jq is also the one that must notice and fetch it again.
   */
  function buildWithJqAfterCuttingItsDeb(): Promise<{ build: CliResult; deb: string; whole: Buffer }> {
    withJq ??= (async () => {
      await downloadPackages(await packageClosure(['jq'])) // in the cache; only this file's tests use jq: no other build reads its .deb meanwhile
      const debs = join(KERNEL_CACHE, 'forkpoint', 'debs')
      const deb = join(
        debs,
        readdirSync(debs).find((f) => /^jq_.*_[0-9a-f]{16}\.deb$/.test(f))!,
      ) // as the cache names it: name, version, the start of its SHA-256
      const whole = readFileSync(deb)
      truncateSync(deb, 100)
      return { build: await runCliInProcess(['machine', 'build', 'python', '--package', 'jq', '--json'], { cwd: dir, env }), deb, whole }
    })()
    return withJq
  }

  it('adds Debian packages with --package, and refuses what is not a package name before apt sees it (exit 2)', { timeout: MACHINE_TIMEOUT }, async () => {
    const bad = await runCliInProcess(['machine', 'build', 'python', '--package=-oAPT::Get::Foo=1'], { cwd: dir, env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/not a Debian package name/)
    const unknown = await runCliInProcess(['machine', 'build', 'python', '--package', 'no-such-package-forkpoint'], { cwd: dir, env })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/no-such-package-forkpoint/)
    const busybox = await runCliInProcess(['machine', 'build', 'busybox', '--package', 'jq'], { cwd: dir, env })
    expect(busybox.code).toBe(2)
    const { build: withJq } = await buildWithJqAfterCuttingItsDeb()
    expect(withJq.code, withJq.stderr).toBe(0)
    const rootfs = await rootfsOf((JSON.parse(withJq.stdout) as { image: string }).image)
    expect(rootfs.packages.map((p) => p.split('=')[0])).toEqual(expect.arrayContaining(['jq', 'python3']))
  })

  it("checks every cached .deb against apt's index: one cut short is fetched again", { timeout: MACHINE_TIMEOUT }, async () => {
    const { build, deb, whole } = await buildWithJqAfterCuttingItsDeb()
    expect(build.code, build.stderr).toBe(0)
    expect(readFileSync(deb).equals(whole)).toBe(true)
  })

  it("builds a node image whose guest runs Debian's node", { timeout: MACHINE_TIMEOUT * 2 }, async () => {
    const node = (await buildMachineImage({ dir, recipe: 'node' })).image
    const m = await bootMachine({ dir, image: node })
    try {
      expect(await sh(m.id, 'node -e "console.log(JSON.stringify({ major: Number(process.versions.node.split(\'.\')[0]) >= 18 }))"')).toBe('{"major":true}\n')
    } finally {
      await killMachine({ dir, machine: m.id })
    }
  })
})
